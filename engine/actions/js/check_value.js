// After typing: does the field (this) hold what was typed? Answers without returning secrets.
function checkValue(KEY, expected, clear) {
  const el = this, S = window[KEY];
  const v = el.isContentEditable && !('value' in el) ? (el.innerText || '').replace(/\n$/, '') : String(el.value ?? '');
  // date and time inputs normalise what was typed (10/11/2011 → 2011-10-11): any value means it took
  const normalised = el.localName === 'input' && /^(date|time|datetime-local|month|week|color)$/.test(el.type);
  const ok = normalised ? v !== '' : clear ? v === expected : v.endsWith(expected);
  const secret = !!(S && S.secret(el));
  const max = el.maxLength > 0 ? el.maxLength : null;
  return { ok, length: v.length, value: secret ? null : v.slice(0, 500), secret, maxLength: max };
}

/* Vigil Demo Shop — all behaviour for index.html. No external resources. */
(function () {
  "use strict";

  // ------------------------------------------------------------------ toast
  var toastTimer = null;

  function showToast(message, kind) {
    var toast = document.getElementById("toast");
    toast.textContent = message;
    toast.className = "toast " + (kind === "error" ? "toast-error" : "toast-success");
    toast.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(function () {
      toast.hidden = true;
    }, 2500);
  }

  // --------------------------------------------------------------- products
  var PRODUCT_NAMES = [
    "Ceramic Coffee Mug", "Linen Tea Towel", "Bamboo Cutting Board", "Cast Iron Skillet",
    "Glass Water Bottle", "Wool Throw Blanket", "Cotton Bath Towel", "Scented Soy Candle",
    "Desk Lamp", "Wireless Mouse", "Mechanical Keyboard", "USB-C Charger",
    "Noise-Cancelling Headphones", "Bluetooth Speaker", "Phone Stand", "Laptop Sleeve",
    "Dotted Notebook", "Fountain Pen", "Sticky Notes", "Desk Organizer",
    "Running Shoes", "Yoga Mat", "Steel Water Flask", "Cycling Gloves",
    "Travel Backpack", "Packing Cubes", "Rain Jacket", "Merino Socks",
    "Chef's Knife", "French Press", "Spice Rack", "Salad Bowl",
    "Potted Succulent", "Garden Shears", "Watering Can", "Seed Starter Kit",
    "Board Game", "Jigsaw Puzzle", "Paperback Novel", "Sketchbook"
  ];

  function priceFor(index) {
    // Deterministic, varied prices between $4.99 and about $150.
    var dollars = 4 + ((index * 37) % 147);
    return "$" + dollars + ".99";
  }

  function renderProducts() {
    var list = document.getElementById("product-list");
    var fragment = document.createDocumentFragment();
    PRODUCT_NAMES.forEach(function (name, i) {
      var n = i + 1;
      var li = document.createElement("li");
      li.className = "product";
      li.id = "product-" + n;
      li.dataset.name = name.toLowerCase();

      var title = document.createElement("span");
      title.className = "product-name";
      title.textContent = name;

      var price = document.createElement("span");
      price.className = "product-price";
      price.textContent = priceFor(i);

      var add = document.createElement("button");
      add.type = "button";
      add.className = "add-to-cart";
      add.textContent = "Add to cart";

      var details = document.createElement("a");
      details.href = "#product-" + n;
      details.textContent = "Details";

      var desc = document.createElement("p");
      desc.className = "product-desc";
      desc.textContent = name + ": a dependable everyday item. Ships in 2\u20134 days.";

      li.append(title, price, add, details, desc);
      fragment.appendChild(li);
    });
    list.appendChild(fragment);
    updateProductCount();
  }

  function updateProductCount() {
    var visible = document.querySelectorAll(".product:not([hidden])").length;
    document.getElementById("product-count").textContent =
      "Showing " + visible + (visible === 1 ? " product" : " products");
    document.getElementById("no-results").hidden = visible !== 0;
  }

  function filterProducts(query) {
    var q = query.trim().toLowerCase();
    document.querySelectorAll(".product").forEach(function (li) {
      li.hidden = q !== "" && li.dataset.name.indexOf(q) === -1;
    });
    updateProductCount();
  }

  // ------------------------------------------------------------------- cart
  var cartCount = 0;

  function setupCart() {
    document.getElementById("product-list").addEventListener("click", function (event) {
      var button = event.target.closest(".add-to-cart");
      if (!button) return;
      cartCount += 1;
      document.getElementById("cart-count").textContent = String(cartCount);
    });
  }

  // ----------------------------------------------------------------- search
  function setupSearch() {
    var form = document.getElementById("search-form");
    var input = document.getElementById("search-input");
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      filterProducts(input.value);
    });
    // The native clear ("x") button of a search field resets the filter.
    input.addEventListener("search", function () {
      if (input.value === "") filterProducts("");
    });
  }

  // ----------------------------------------------------------------- signup
  var EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

  function setupSignup() {
    var form = document.getElementById("signup-form");
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var email = form.elements.email.value.trim();
      if (!EMAIL_RE.test(email)) {
        showToast("Please enter a valid email address", "error");
        return;
      }
      showToast("Account created \u2014 welcome!", "success");
    });
  }

  // ------------------------------------------------------------ cookie banner
  function setupCookieBanner() {
    var banner = document.getElementById("cookie-banner");
    function hide() {
      banner.hidden = true;
    }
    document.getElementById("cookie-accept").addEventListener("click", hide);
    document.getElementById("cookie-reject").addEventListener("click", hide);
  }

  // ------------------------------------------------- listener-only clickable
  function setupMoreOffers() {
    var toggle = document.getElementById("more-offers-toggle");
    var offers = document.getElementById("more-offers");
    toggle.addEventListener("click", function () {
      offers.hidden = !offers.hidden;
    });
  }

  // Used by the onclick attribute of the newsletter call-to-action.
  window.subscribeNewsletter = function () {
    showToast("Thanks for subscribing to our newsletter!", "success");
  };

  // --------------------------------------------------------- custom elements
  var WIDGET_CSS =
    ":host { display: block; padding: 12px 14px; border: 1px solid #d9dde3;" +
    " border-radius: 6px; background: #f9fafb; font: inherit; }" +
    "h3 { margin: 0 0 8px; font-size: 1rem; }" +
    "p { margin: 0 0 10px; color: #616e7c; font-size: 0.9rem; }" +
    ".row { display: flex; gap: 6px; }" +
    "input { font: inherit; padding: 6px 8px; border: 1px solid #d9dde3;" +
    " border-radius: 6px; min-width: 0; flex: 1; }" +
    "button { font: inherit; padding: 6px 14px; border: 1px solid #2f5d8a;" +
    " border-radius: 6px; background: #2f5d8a; color: #fff; cursor: pointer; }" +
    "button:hover { background: #24496d; }" +
    ".status { margin: 8px 0 0; min-height: 1.2em; color: #2e7d32; }";

  // Open shadow root: reachable via element.shadowRoot.
  class PromoWidget extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      var root = this.attachShadow({ mode: "open" });
      root.innerHTML =
        "<style>" + WIDGET_CSS + "</style>" +
        "<h3>Weekly deal</h3>" +
        "<p>20% off all headphones until Sunday.</p>" +
        "<button type=\"button\">Claim deal</button>" +
        "<p class=\"status\" role=\"status\"></p>";
      var status = root.querySelector(".status");
      root.querySelector("button").addEventListener("click", function () {
        status.textContent = "Deal claimed!";
      });
    }
  }

  // Closed shadow root: element.shadowRoot is null from the outside.
  class SecretCoupon extends HTMLElement {
    #root = null;

    connectedCallback() {
      if (this.#root) return;
      this.#root = this.attachShadow({ mode: "closed" });
      this.#root.innerHTML =
        "<style>" + WIDGET_CSS + "</style>" +
        "<h3>Have a coupon?</h3>" +
        "<div class=\"row\">" +
        "<input type=\"text\" placeholder=\"Coupon code\" aria-label=\"Coupon code\">" +
        "<button type=\"button\">Apply</button>" +
        "</div>" +
        "<p class=\"status\" role=\"status\"></p>";
      var root = this.#root;
      var input = root.querySelector("input");
      var status = root.querySelector(".status");
      root.querySelector("button").addEventListener("click", function () {
        var code = input.value.trim();
        status.style.color = code ? "#2e7d32" : "#c62828";
        status.textContent = code ? "Coupon " + code.toUpperCase() + " applied." : "Enter a coupon code first.";
      });
    }
  }

  customElements.define("promo-widget", PromoWidget);
  customElements.define("secret-coupon", SecretCoupon);

  // ------------------------------------------------------------------- init
  renderProducts();
  setupCart();
  setupSearch();
  setupSignup();
  setupCookieBanner();
  setupMoreOffers();
})();

"""What the tests share: servers, fakes, helpers and the corpora's drivers."""

"""Shopping carts."""

from .catalog import price_of


class Cart:
    def __init__(self):
        self.items = {}

    def add(self, sku, quantity=1):
        if quantity < 1:
            raise ValueError("quantity must be positive")
        self.items[sku] = self.items.get(sku, 0) + quantity

    def total(self):
        return sum(price_of(sku) * quantity for sku, quantity in self.items.items())

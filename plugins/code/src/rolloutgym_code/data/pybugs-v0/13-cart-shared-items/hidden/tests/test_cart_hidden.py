from shop.cart import Cart


def test_carts_are_independent():
    first, second = Cart(), Cart()
    first.add("apple", 2)
    assert second.items == {}
    assert first.total() == 60


def test_quantities_accumulate():
    cart = Cart()
    cart.add("pear")
    cart.add("pear", 2)
    assert cart.items == {"pear": 3} and cart.total() == 135

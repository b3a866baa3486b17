PRICES = {"apple": 30, "pear": 45, "melon": 250}


def price_of(sku):
    try:
        return PRICES[sku]
    except KeyError:
        raise KeyError(f"unknown product {sku!r}") from None

"""Prices arrive as strings like '19.99'; payments need integer cents."""


def to_cents(price):
    return int(float(price) * 100)


def order_total_cents(prices):
    return sum(to_cents(price) for price in prices)

from invoice import invoice_total, round_money


def test_half_cent_rounds_up():
    assert round_money(2.675) == "2.68"
    assert round_money("1.005") == "1.01"


def test_below_half_rounds_down():
    assert round_money("1.004") == "1.00"


def test_total_of_lines():
    lines = [{"quantity": 3, "unit_price": "0.335"}, {"quantity": 1, "unit_price": "10"}]
    assert invoice_total(lines) == "11.01"

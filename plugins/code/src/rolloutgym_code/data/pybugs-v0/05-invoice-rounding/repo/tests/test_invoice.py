from invoice import round_money


def test_whole_amount():
    assert round_money(3) == "3.00"

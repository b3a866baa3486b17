from timesheet import shift_hours


def test_day_shift():
    assert shift_hours("2024-05-01 09:00", "2024-05-01 17:30") == 8.5

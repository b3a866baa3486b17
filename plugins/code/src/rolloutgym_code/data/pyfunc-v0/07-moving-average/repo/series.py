def moving_average(values, window):
    """Averages of each run of ``window`` consecutive values, as floats.

    [1, 2, 3, 4] with window 2 -> [1.5, 2.5, 3.5]. Fewer values than ``window`` -> [].
    Raise ValueError when ``window`` is less than 1.
    """
    raise NotImplementedError

"""Send records in fixed-size batches."""


def batches(records, size):
    """Consecutive lists of at most ``size`` records."""
    if size < 1:
        raise ValueError("batch size must be at least 1")
    return [records[start:start + size] for start in range(0, len(records), size)]


def upload(records, send, size=100):
    for batch in batches(records, size):
        send(batch)

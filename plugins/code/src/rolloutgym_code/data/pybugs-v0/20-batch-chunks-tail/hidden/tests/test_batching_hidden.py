from batching import batches, upload


def test_partial_last_batch():
    assert batches(list(range(7)), 3) == [[0, 1, 2], [3, 4, 5], [6]]


def test_smaller_than_one_batch():
    assert batches([1, 2], 5) == [[1, 2]]


def test_upload_sends_everything_once():
    sent = []
    upload(list(range(10)), sent.append, size=4)
    assert [record for batch in sent for record in batch] == list(range(10))

def top_words(text, n):
    """The ``n`` most frequent words of ``text`` as (word, count) tuples.

    Words are runs of letters and apostrophes, compared case-insensitively and returned in
    lowercase. Order by count (highest first), then alphabetically. Fewer than ``n`` distinct
    words: return them all.
    """
    raise NotImplementedError

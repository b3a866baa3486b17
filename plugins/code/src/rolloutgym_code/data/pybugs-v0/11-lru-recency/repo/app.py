from cache import LRUCache

thumbnails = LRUCache(capacity=128)

"""Blog posts with tags."""


class Post:
    def __init__(self, title, tags=None):
        self.title = title
        self.tags = list(tags) if tags is not None else []

    def add_tag(self, tag):
        tag = tag.strip().lower()
        if tag and tag not in self.tags:
            self.tags.append(tag)
        return self

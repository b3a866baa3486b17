"""An SDK-style ``sql`` environment: a small library database, questions and one data change.

Run it locally (oracle = the gold SQL, null = submits nothing)::

    rolloutgym run plugins/sql/examples/library_env.py --policy oracle
    rolloutgym run plugins/sql/examples/library_env.py --policy null
    rolloutgym run plugins/sql/examples/library_env.py --policy oracle --backend duckdb

Written for the rollout SDK, it changes only its import line.
"""

from rolloutgym.declarative import Environment, Task

SCHEMA = """
CREATE TABLE authors (author_id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT);
CREATE TABLE books (
    book_id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    author_id INTEGER NOT NULL REFERENCES authors(author_id),
    year INTEGER NOT NULL,
    copies INTEGER NOT NULL
);
CREATE TABLE loans (
    loan_id INTEGER PRIMARY KEY,
    book_id INTEGER NOT NULL REFERENCES books(book_id),
    member TEXT NOT NULL,
    loan_date DATE NOT NULL,
    returned_date DATE
);
"""

SEED = """
INSERT INTO authors VALUES (1, 'Jane Austen', 'United Kingdom'), (2, 'Frank Herbert', 'United States'),
    (3, 'Chinua Achebe', 'Nigeria'), (4, 'Anonymous', NULL);
INSERT INTO books VALUES (1, 'Emma', 1, 1815, 3), (2, 'Persuasion', 1, 1817, 1), (3, 'Dune', 2, 1965, 4),
    (4, 'Things Fall Apart', 3, 1958, 2), (5, 'Beowulf', 4, 1000, 1), (6, 'Pride and Prejudice', 1, 1813, 5);
INSERT INTO loans VALUES (1, 3, 'ana', '2024-03-01', '2024-03-20'), (2, 3, 'ben', '2024-04-02', NULL),
    (3, 1, 'ana', '2024-04-05', NULL), (4, 4, 'chloe', '2024-04-10', '2024-04-30'), (5, 6, 'ben', '2024-05-01', NULL);
"""

env = Environment(
    slug="library-sql",
    name="Library",
    template="sql",
    description="A small library: authors, books and loans.",
    schema=SCHEMA,
    seed=SEED,
    tasks=[
        Task(
            instruction="How many books were published before 1900?",
            hidden_ground_truth={"sql": "SELECT COUNT(*) FROM books WHERE year < 1900"},
            split="train",
        ),
        Task(
            instruction="List the titles of Jane Austen's books from the oldest to the newest.",
            hidden_ground_truth={
                "sql": "SELECT b.title FROM books b JOIN authors a ON a.author_id = b.author_id "
                "WHERE a.name = 'Jane Austen' ORDER BY b.year"
            },
            split="dev",
        ),
        Task(
            instruction="Which members have a loan that is not returned yet? Return each member once.",
            hidden_ground_truth={"sql": "SELECT DISTINCT member FROM loans WHERE returned_date IS NULL"},
            split="test",
        ),
        Task(
            instruction="How many authors have no country on record?",
            hidden_ground_truth={"result": [[1]]},
            split="test",
        ),
        Task(
            instruction="Ben returned all his books today (2024-06-01). Record it: set the returned date of each of "
            "his open loans.",
            hidden_ground_truth={
                "sql": ["UPDATE loans SET returned_date = '2024-06-01' WHERE member = 'ben' AND returned_date IS NULL"]
            },
            split="train",
        ),
    ],
)

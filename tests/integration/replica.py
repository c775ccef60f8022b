"""A PostgreSQL or MariaDB copy of the sample customer service's `orders` and
`customer` tables: the read-only datasource of the sql-template route on a
real server, for end-to-end tests.

The server is a throwaway one started by scripts/test-postgres.sh or
scripts/test-mariadb.sh (harness.ScriptServer) and stopped by the pid the
script recorded. The tables are the ones bench/e2e_bench.py loads (its
schema_sql, one definition for both); the rows are copied from the service's
SQLite file with plain INSERTs through harness.PostgresDb / harness.MariaDb,
which is quick for the small tables a test uses and needs no LOAD DATA or COPY
file beside the server.
"""
import os
import sqlite3
import sys

from harness import REPO, MariaDb, PostgresDb, ScriptServer

sys.path.insert(0, os.path.join(REPO, "bench"))
from e2e_bench import CUSTOMER_COLUMNS, ORDER_COLUMNS, schema_sql  # noqa: E402

# kind -> (its start script, the datasource kind and the service's replica-dialect)
KINDS = {"postgres": ("test-postgres.sh", "postgres"), "mariadb": ("test-mariadb.sh", "mysql")}
# Rows per INSERT: one statement is one argument of psql/mariadb, and Linux
# caps a single argument at 128 KiB.
ROWS_PER_INSERT = 200


class Replica:
    """start() the server, load(sqlite_path) the tables, datasource() for the
    center's config, stop() in tearDownClass."""

    def __init__(self, kind):
        self.kind = kind
        script, self.dialect = KINDS[kind]
        self.server = ScriptServer(script, prefix=f"ec-replica-{kind}-")
        self.db = None

    def start(self):
        url = self.server.start()
        self.db = PostgresDb(url) if self.dialect == "postgres" else MariaDb(url)
        return url

    def datasource(self):
        return {"kind": self.dialect, "url": self.server.address}

    def load(self, sqlite_path):
        """Creates the tables and copies every row of both from the service's file."""
        for statement in schema_sql(self.dialect):
            self.db.execute(statement)
        for table, columns in (("customer", CUSTOMER_COLUMNS), ("orders", ORDER_COLUMNS)):
            rows = read_table(sqlite_path, table, columns)
            for start in range(0, len(rows), ROWS_PER_INSERT):
                chunk = rows[start:start + ROWS_PER_INSERT]
                values = ", ".join(["(" + ", ".join("?" * len(columns)) + ")"] * len(chunk))
                self.db.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES {values}",
                                [v for row in chunk for v in row])
            copied = self.db.query(f"SELECT COUNT(*) AS n FROM {table}")[0]["n"]
            if copied != len(rows):
                raise RuntimeError(f"{self.kind}: {copied} of {len(rows)} {table} rows copied")

    def stop(self):
        self.server.stop()


def read_table(sqlite_path, table, columns):
    con = sqlite3.connect(sqlite_path)
    try:
        return con.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY id").fetchall()
    finally:
        con.close()

"""What a team lake's PostgreSQL roles need, given and checked: `toolkit lake init` and `toolkit lake check`.

A lake's catalog is DuckLake's tables (`ducklake_*`) in one PostgreSQL database; DuckLake also creates
a table for each small commit it inlines (`ducklake_inlined_data_*`), so a role that writes creates
tables, and a role that reads must be able to read the tables writers create later:

    writer  CONNECT on the database, USAGE and CREATE on its schema, SELECT INSERT UPDATE DELETE on its tables
    reader  CONNECT on the database, USAGE on its schema, SELECT on its tables, now and later

Statements run through DuckDB's postgres extension, as the role the address names (a DBA's, for init).
Nothing here prints or raises a password: a role's is given in the environment and shown as a psql
variable (`:'cron_password'`) in the SQL printed for a DBA.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import duckdb

from toolkit.catalog.masking import MASK, mask_passwords
from toolkit.errors import WorkspaceError
from toolkit.storage import extensions
from toolkit.storage.file import literal, session
from toolkit.storage.lake import PREFIX, password_secret, without_password

__all__ = ["READS", "WRITES", "Ability", "Plan", "abilities", "existing", "libpq_of", "may_write", "plan", "run"]

SCHEMA = "public"   # where DuckLake puts its catalog's tables unless the address says METADATA_SCHEMA
WRITES = ("SELECT", "INSERT", "UPDATE", "DELETE")
READS = ("SELECT",)
_ADMIN = "admin"    # the name the DBA's own connection is attached under


def libpq_of(address: str) -> str:
    """The PostgreSQL connection string of a `ducklake:postgres:...` address."""
    rest = address[len(PREFIX):] if address.startswith(PREFIX) else address
    kind, _, dsn = rest.partition(":")
    if kind.lower() not in ("postgres", "postgresql") or not dsn:
        raise WorkspaceError(f"{mask_passwords(address)} is no DuckLake address on PostgreSQL: "
                             "toolkit lake init and check take 'ducklake:postgres:dbname=... host=... user=...'")
    return dsn


def _field(dsn: str, name: str) -> str | None:
    found = re.search(rf"(?:^|\s){name}\s*=\s*('(?:[^'\\]|\\.)*'|\S+)", dsn)
    return found.group(1).strip("'") if found else None


def _with_database(dsn: str, database: str) -> str:
    if _field(dsn, "dbname") is None:
        return f"{dsn} dbname={database}"
    return re.sub(r"(^|\s)dbname\s*=\s*('(?:[^'\\]|\\.)*'|\S+)", lambda m: f"{m.group(1)}dbname={database}", dsn)


def _ident(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$-]{0,62}", name):
        raise WorkspaceError(f"{name!r} is no PostgreSQL role or database name toolkit takes: use letters, "
                             "digits and _ (the name the role logs in with)")
    return '"' + name + '"'


@dataclass
class Plan:
    """The statements that make a lake's database and roles, in order; `server` ones run outside any
    transaction in the server's `postgres` database, `database` ones in the lake's own database."""

    database: str
    writer: str | None
    reader: str | None
    admin: str
    server: list[str] = field(default_factory=list)
    database_sql: list[str] = field(default_factory=list)

    def printed(self) -> str:
        """The SQL for a DBA, for psql; passwords as psql variables, never their values."""
        lines = ["-- as a PostgreSQL superuser (or a role with CREATEDB and CREATEROLE), in psql:",
                 *[f"{s};" for s in self.server], f"\\connect {self.database}",
                 "-- in the lake's database; the first open (this role's or the writer's) makes DuckLake's tables,",
                 "-- which the default privileges below reach, before or after it",
                 *[f"{s};" for s in self.database_sql]]
        return "\n".join(lines)


def plan(address: str, writer: str | None, reader: str | None, passwords: dict[str, str] | None = None,
         existing: dict[str, bool] | None = None, shown: bool = False) -> Plan:
    """What makes the lake's database and gives `writer` and `reader` exactly what each needs.
    `existing` says which roles and the database are there already (a printed plan creates them all);
    `shown` writes each password as a psql variable instead of its value."""
    dsn = libpq_of(address)
    database, admin = _field(dsn, "dbname"), _field(dsn, "user") or "postgres"
    if not database:
        raise WorkspaceError("the address names no database: add dbname=... (toolkit lake init creates it)")
    existing, passwords = existing or {}, passwords or {}
    db, step = _ident(database), Plan(database, writer, reader, admin)
    if not existing.get(f"database {database}"):
        step.server.append(f"CREATE DATABASE {db}")
    for role in filter(None, (writer, reader)):
        if role == admin:
            continue
        secret = f":'{role}_password'" if shown else (literal(passwords[role]) if role in passwords else None)
        said = f" PASSWORD {secret}" if secret else ""
        if not existing.get(f"role {role}"):
            step.server.append(f"CREATE ROLE {_ident(role)} LOGIN{said}")
        elif said:
            step.server.append(f"ALTER ROLE {_ident(role)} LOGIN{said}")
    step.server.append(f"REVOKE ALL ON DATABASE {db} FROM PUBLIC")  # only the roles named here connect
    sql, owner = step.database_sql, _ident(admin)
    for role, kinds, schema_rights in ((writer or "", WRITES, "USAGE, CREATE"), (reader or "", READS, "USAGE")):
        if not role or role == admin:
            continue
        r = _ident(role)
        sql += [f"GRANT CONNECT ON DATABASE {db} TO {r}",
                f"GRANT {schema_rights} ON SCHEMA {SCHEMA} TO {r}",
                f"GRANT {', '.join(kinds)} ON ALL TABLES IN SCHEMA {SCHEMA} TO {r}",
                # tables the DBA's role makes later (a newer DuckLake's) reach the role too
                f"ALTER DEFAULT PRIVILEGES FOR ROLE {owner} IN SCHEMA {SCHEMA} GRANT {', '.join(kinds)} ON TABLES TO {r}"]
    if writer and reader and writer != admin and reader != admin:
        # the inlined-data tables a writer creates as it commits: the reader must read them too
        sql.append(f"ALTER DEFAULT PRIVILEGES FOR ROLE {_ident(writer)} IN SCHEMA {SCHEMA} "
                   f"GRANT SELECT ON TABLES TO {_ident(reader)}")
    return step


def _connect() -> duckdb.DuckDBPyConnection:
    con = session(duckdb.connect(config={"extension_directory": str(extensions.extension_directory())}))
    extensions.load(con, "postgres")
    return con


def _attach(con: duckdb.DuckDBPyConnection, dsn: str, options: str = "") -> None:
    """The PostgreSQL of `dsn` attached as the DBA's connection, its password in a secret, never in the path."""
    shown, password = without_password(dsn)
    secret = password_secret(con, password)
    con.execute(f"ATTACH {literal(shown)} AS {_ADMIN} (TYPE postgres{', ' + options if options else ''}"
                f"{f', SECRET {secret}' if secret else ''})")


def _said(error: BaseException, secrets: list[str]) -> str:
    """PostgreSQL's own words for a failed statement, without the statement (it may hold a password)."""
    text = str(error)
    found = re.search(r"ERROR:\s*(.*)", text)
    words = (found.group(1) if found else text.strip().splitlines()[-1]).strip()
    for secret in secrets:
        words = words.replace(secret, MASK)
    return mask_passwords(words)[:300]


def run(address: str, step_plan: Plan, secrets: list[str], phase: str) -> list[str]:
    """Run the plan's `phase` ('server' or 'database') as the address's role; the statements run,
    shown without passwords."""
    dsn = libpq_of(address)
    con = _connect()
    statements = step_plan.server if phase == "server" else step_plan.database_sql
    target = _with_database(dsn, "postgres" if phase == "server" else step_plan.database)
    done = []
    try:
        _attach(con, target)
        for statement in statements:
            try:
                con.execute(f"CALL postgres_execute({literal(_ADMIN)}, {literal(statement)}, use_transaction => false)")
            except duckdb.Error as error:
                raise WorkspaceError(f"the lake's PostgreSQL refused `{_shown(statement)}`: "
                                     f"{_said(error, secrets)}. Run it as a superuser, or give a DBA "
                                     f"the SQL of `toolkit lake init ... --print-sql`") from None
            done.append(_shown(statement))
    except duckdb.Error as error:
        raise WorkspaceError(f"cannot reach the lake's PostgreSQL as {_field(dsn, 'user') or 'your user'}: "
                             f"{_said(error, secrets)}") from None
    finally:
        con.close()
    return done


def _shown(statement: str) -> str:
    return re.sub(r"PASSWORD '(?:[^']|'')*'", f"PASSWORD {MASK}", statement)


def existing(address: str, roles: list[str], secrets: list[str]) -> dict[str, bool]:
    """Which of the roles, and the address's database, the server already has."""
    dsn = libpq_of(address)
    database = _field(dsn, "dbname") or ""
    con = _connect()
    try:
        _attach(con, _with_database(dsn, "postgres"), "READ_ONLY")
        names = ", ".join(literal(r).replace("'", "''") for r in roles) or "''''"
        found = {f"role {r}" for (r,) in con.execute(
            f"SELECT * FROM postgres_query({literal(_ADMIN)}, 'SELECT rolname::TEXT FROM pg_roles WHERE rolname IN ({names})')").fetchall()}
        there = con.execute(f"SELECT * FROM postgres_query({literal(_ADMIN)}, 'SELECT count(*) FROM pg_database "
                            f"WHERE datname = {literal(database).replace(chr(39), chr(39) * 2)}')").fetchall()[0][0]
        return {**dict.fromkeys(found, True), f"database {database}": bool(there)}
    except duckdb.Error as error:
        raise WorkspaceError(f"cannot reach the lake's PostgreSQL as {_field(dsn, 'user') or 'your user'}: "
                             f"{_said(error, secrets)}") from None
    finally:
        con.close()


@dataclass
class Ability:
    """One thing a role may or may not do in a lake, and what is missing for it."""

    what: str
    can: bool
    missing: list[str]


def abilities(address: str) -> tuple[str, list[Ability]]:
    """(the role, what it can and cannot do in the lake's catalog): read the workspace, write it
    (refresh, pull), and commit small loads (DuckLake's inlined tables need CREATE on the schema)."""
    dsn = libpq_of(address)
    con = _connect()
    try:
        _attach(con, dsn, "READ_ONLY")
        query = ("SELECT current_user::TEXT AS role, c.relname::TEXT AS name, "
                 "has_table_privilege(c.oid, ''SELECT'') AS s, has_table_privilege(c.oid, ''INSERT'') AS i, "
                 "has_table_privilege(c.oid, ''UPDATE'') AS u, has_table_privilege(c.oid, ''DELETE'') AS d, "
                 "has_schema_privilege(n.oid, ''USAGE'') AS usage, has_schema_privilege(n.oid, ''CREATE'') AS "
                 "make FROM pg_class c JOIN pg_namespace n ON "
                 f"n.oid = c.relnamespace WHERE n.nspname = ''{SCHEMA}'' AND c.relkind = ''r'' "
                 "AND c.relname LIKE ''ducklake%''")
        rows = con.execute(f"SELECT * FROM postgres_query({literal(_ADMIN)}, '{query}')").fetchall()
        role = rows[0][0] if rows else (_field(dsn, "user") or "?")
    except duckdb.Error as error:
        raise WorkspaceError(f"cannot reach the lake's catalog: {_said(error, [])}") from error
    finally:
        con.close()
    if not rows:
        return role, [Ability("read the workspace", False, ["the lake's tables: none yet (toolkit lake init makes them)"])]
    usage, create = rows[0][6], rows[0][7]
    need_read = [f"SELECT on {r[1]}" for r in rows if not r[2]] + ([] if usage else [f"USAGE on schema {SCHEMA}"])
    need_write = [f"{kind} on {r[1]}" for r in rows for kind, ok in zip(WRITES, r[2:6], strict=True) if not ok]
    need_write += [] if usage else [f"USAGE on schema {SCHEMA}"]
    need_create = [] if create else [f"CREATE on schema {SCHEMA}"]
    return role, [Ability("read the workspace (ws.read, ws.sql, toolkit show, export)", not need_read, need_read),
                  Ability("write it (refresh, pull, fetch)", not need_write and not need_create,
                          need_write + need_create)]


def may_write(address: str) -> bool:
    """Whether the address's role may write the lake's catalog; True when that cannot be told (another
    catalog database, a lake not made yet): the lake's own error then says what failed."""
    try:
        _, found = abilities(address)
    except WorkspaceError:
        return True
    return found[-1].can or "none yet" in " ".join(found[0].missing)

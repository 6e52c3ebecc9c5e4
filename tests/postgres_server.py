"""A throwaway PostgreSQL server for the tests, and the pytest fixtures that hand out its databases.

``PostgresServer`` runs Debian's ``postgresql`` binaries (``initdb``, ``pg_ctl``, ``postgres``) on a
fresh cluster in a folder of its own under the temporary folder, reachable only through a Unix socket
in that folder: no TCP port to collide with, nothing outside the folder to clean up. The folder comes
from ``tempfile.mkdtemp``, not pytest's ``tmp_path``: PostgreSQL refuses to run as root, so as root
the cluster belongs to the ``postgres`` OS user, who could not enter pytest's root-only folders.
Durability is switched off (the data dies with the session): start-up and every commit are quick.
A session killed before its teardown (``timeout``, SIGKILL) leaves its cluster running: the next
server to start stops and removes every such cluster whose owning process is gone.

The fixtures: ``postgres_server`` (one cluster per test session, started when a test first asks for
it) and ``postgres_url`` (a fresh empty database on it for one test, dropped after it). Without the
binaries they skip, except in CI, which must install them (``.ci/run`` does).
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from urllib.parse import quote, urlsplit

import pytest

SERVER_PROGRAMS = ("initdb", "pg_ctl", "postgres", "psql")
DEBIAN_VERSIONS = Path("/usr/lib/postgresql")
SERVER_USER = "postgres"  # the OS user the server runs as when we are root, and the database superuser
PORT = 5432  # only the socket's name (.s.PGSQL.5432 in the cluster's folder): no TCP port is opened
FOLDER_PREFIX = "paiju-pg-"
OWNER_FILE = "owner.pid"  # the pid of the process that started the cluster in this folder
SOCKET_PATH_LIMIT = 107  # sun_path holds 108 bytes with the final NUL on Linux
START_TIMEOUT_S = 60
SETTINGS = {
    "listen_addresses": "''",
    "port": str(PORT),
    "max_connections": "200",  # several bot processes, each with its pool, in one test
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
}


def find_binaries() -> Path | None:
    """The folder holding ``initdb``, ``pg_ctl``, ``postgres`` and ``psql`` of one PostgreSQL version:
    where ``initdb`` on PATH really lives (Debian's PATH has none, or a symlink into its versioned
    folder), else the newest of Debian's ``/usr/lib/postgresql/<version>/bin``; None without any."""
    on_path = shutil.which("initdb")
    candidates = [Path(on_path).resolve().parent] if on_path else []
    versions = sorted(
        (folder for folder in DEBIAN_VERSIONS.glob("*/bin") if folder.parent.name.isdigit()),
        key=lambda folder: int(folder.parent.name),
        reverse=True,
    )
    for folder in [*candidates, *versions]:
        if all(os.access(folder / program, os.X_OK) for program in SERVER_PROGRAMS):
            return folder
    return None


class PostgresServer:
    """One PostgreSQL cluster in a temporary folder, listening only on a Unix socket there.

    ``start()`` creates and starts it and returns once it accepts connections; ``stop()`` stops it
    and removes the folder. Also a context manager. Synchronous throughout (subprocesses), so sync
    and async fixtures alike can use it."""

    def __init__(self, binaries: Path):
        self.binaries = binaries
        self.folder: Path | None = None
        self._names = itertools.count(1)

    @property
    def data(self) -> Path:
        return self._folder / "data"

    @property
    def log(self) -> Path:
        return self._folder / "server.log"

    @property
    def _folder(self) -> Path:
        if self.folder is None:
            raise RuntimeError("the PostgreSQL server is not started")
        return self.folder

    def url(self, database: str = "postgres") -> str:
        """A libpq and asyncpg URL for ``database`` over this cluster's socket, as its superuser."""
        return f"postgresql://{SERVER_USER}@/{database}?host={quote(str(self._folder))}&port={PORT}"

    def start(self) -> PostgresServer:
        sweep_abandoned(self.binaries)
        self.folder = make_folder()
        try:
            if os.geteuid() == 0:
                shutil.chown(self.folder, SERVER_USER, SERVER_USER)
            self._run(
                "initdb",
                f"--pgdata={self.data}",
                f"--username={SERVER_USER}",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            )
            with (self.data / "postgresql.conf").open("a", encoding="utf-8") as conf:
                conf.write(f"unix_socket_directories = '{self.folder}'\n")
                conf.writelines(f"{name} = {value}\n" for name, value in SETTINGS.items())
            started = self._run(
                "pg_ctl", "start", "--wait", f"--timeout={START_TIMEOUT_S}", "-D", str(self.data),
                "-l", str(self.log), check=False,
            )  # fmt: skip
            if started.returncode != 0:
                log = self.log.read_text(errors="replace") if self.log.exists() else ""
                raise RuntimeError(f"PostgreSQL did not start:\n{started.stdout}\n{log[-2000:]}")
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stops the server at once (no checkpoint: the data is thrown away) and removes the folder."""
        if self.folder is None:
            return
        remove_cluster(self.binaries, self.folder)
        self.folder = None

    def create_database(self) -> str:
        """The URL of a new, empty database with a name no other in this cluster has had."""
        name = f"test_{next(self._names)}"
        self.sql(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop_database(self, url: str) -> None:
        """Drops the database ``url`` names, closing any connection a test left open to it."""
        name = urlsplit(url).path.lstrip("/")
        self.sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def sql(self, statement: str, database: str = "postgres") -> str:
        """Runs one statement through ``psql`` as the superuser; its output, unaligned, tuples only."""
        done = subprocess.run(
            [self.binaries / "psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
             "-d", self.url(database), "-c", statement],
            capture_output=True, text=True, cwd=self._folder,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"psql {statement!r} failed: {done.stderr.strip()}")
        return done.stdout.strip()

    def _run(self, program: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run_server_program(self.binaries, self._folder, program, *args, check=check)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()


def run_server_program(
    binaries: Path, folder: Path, program: str, *args: str, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Runs a server program, as the ``postgres`` OS user when we are root (the server refuses root),
    from the cluster's folder (the server user may not enter the current one)."""
    command = [str(binaries / program), *args]
    if os.geteuid() == 0:
        command = ["runuser", "-u", SERVER_USER, "--", *command]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=folder)
    if check and done.returncode != 0:
        raise RuntimeError(f"{program} failed ({done.returncode}):\n{done.stdout}")
    return done


def make_folder() -> Path:
    """A new folder for one cluster, marked with our pid, in the temporary folder unless the socket's
    path would be too long there for a Unix socket (a deep $TMPDIR), then in /tmp."""
    folder = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))
    if len(str(folder / f".s.PGSQL.{PORT}")) >= SOCKET_PATH_LIMIT:
        folder.rmdir()
        folder = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX, dir="/tmp"))
    (folder / OWNER_FILE).write_text(str(os.getpid()))
    return folder


def remove_cluster(binaries: Path, folder: Path) -> None:
    """Stops the server of the cluster in ``folder`` if it runs, and removes the folder."""
    if (folder / "data" / "postmaster.pid").exists():
        run_server_program(binaries, folder, "pg_ctl", "stop", "--wait", "--mode=immediate",
                           "-D", str(folder / "data"), check=False)  # fmt: skip
    shutil.rmtree(folder, ignore_errors=True)


def sweep_abandoned(binaries: Path) -> None:
    """Removes the clusters (and stops their servers) whose starting process has ended without
    stopping them; a folder with no owner yet is one being made right now, and is left alone."""
    places = {Path(tempfile.gettempdir()), Path("/tmp")}
    for folder in (folder for place in places for folder in place.glob(f"{FOLDER_PREFIX}*")):
        try:
            owner = int((folder / OWNER_FILE).read_text())
        except (OSError, ValueError):
            continue
        if not alive(owner):
            remove_cluster(binaries, folder)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def server_user_id() -> int:
    """The OS user id the server runs as: ``postgres`` when we are root, else ourselves."""
    return pwd.getpwnam(SERVER_USER).pw_uid if os.geteuid() == 0 else os.geteuid()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One throwaway PostgreSQL cluster for the test session. Skipped where Debian's ``postgresql``
    is not installed, except in CI, which must have it."""
    binaries = find_binaries()
    if binaries is None:
        if os.environ.get("CI"):
            raise RuntimeError("CI must install Debian's postgresql for the storage tests (.ci/run does)")
        pytest.skip("PostgreSQL's server programs are not installed here (apt-get install postgresql)")
    with PostgresServer(binaries) as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """The URL of a fresh, empty database for one test, dropped after it."""
    url = postgres_server.create_database()
    try:
        yield url
    finally:
        postgres_server.drop_database(url)


async def waits_on_a_lock(conn) -> bool:
    """Does another connection to ``conn``'s database wait for a lock (a row another transaction
    holds)? For tests that hold a row to stop a write half-way."""
    return bool(
        await conn.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
        )
    )

#!/usr/bin/env bash
# Throwaway PostgreSQL and MariaDB servers for the test suite.
#
#   eval "$(.ci/databases.sh start [--install])"   # start both; prints the exports to eval
#   make test                                       # the store contract suite runs on them
#   .ci/databases.sh stop                           # stop them, remove their files
#
# `start` makes a directory /tmp/memstrata-db.XXXXXX holding a PostgreSQL cluster and a
# MariaDB data directory, each server on a free loopback port (and its own socket), creates a
# database `memstrata_test` and a user `memstrata` on each, and prints on standard output:
#
#   export MEMSTRATA_TEST_DB_DIR=...           (what `stop` removes)
#   export MEMSTRATA_TEST_POSTGRES_URL=postgresql://memstrata@127.0.0.1:PORT/memstrata_test
#   export MEMSTRATA_TEST_MYSQL_URL=mysql://memstrata:memstrata@127.0.0.1:PORT/memstrata_test
#
# Everything else goes to standard error. A backend that cannot be had (not installed and no
# --install, the install failed, the server did not start) is announced loudly and its URL is
# left out: the tests for it fail under CI=true (as .ci/run runs them) and skip elsewhere,
# saying why; `start` itself never fails for it.
# `--install` (or MEMSTRATA_DB_INSTALL=1) installs the missing Debian packages (postgresql,
# mariadb-server) with apt-get, as root, without prompting.
#
# The servers are for tests only: fsync is off. `stop [DIR]` stops the servers of DIR (default
# $MEMSTRATA_TEST_DB_DIR) and removes it; `start` also removes the directories left by an
# earlier run whose starting shell is gone (a run that was killed). Running it as root, the
# servers run as the `postgres` and `mysql` system users the packages create.
set -uo pipefail
PATH="$PATH:/usr/sbin:/sbin"  # runuser, mariadbd

PREFIX="${TMPDIR:-/tmp}/memstrata-db."
MARK=".memstrata-test-databases"
START_WAIT_S=60
# what the tests of a backend left out do (tests/contract/backends.py): fail under CI=true
WILL=skip
if [ "$(printf '%s' "${CI:-}" | tr -d '[:space:]' | tr '[:upper:]' '[:lower:]')" = true ]; then
  WILL="fail (CI=true)"
fi

say() { printf 'databases: %s\n' "$*" >&2; }
loud() {
  printf '\n' >&2
  printf 'databases: !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n' >&2
  printf 'databases: !!! %s\n' "$@" >&2
  printf 'databases: !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\n' >&2
}

is_root() { [ "$(id -u)" = 0 ]; }

# Run a command as the given system user when root (servers refuse to run as root).
as_user() {
  local user=$1
  shift
  if is_root; then
    (cd / && runuser -u "$user" -- "$@")
  else
    "$@"
  fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pg_bin() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
    printf '%s\n' "$dir"
  fi
}

my_server() { command -v mariadbd || command -v mysqld || ls /usr/sbin/mariadbd 2>/dev/null; }

install_packages() {
  local wanted=()
  [ -n "$(pg_bin)" ] || wanted+=(postgresql)
  [ -n "$(my_server)" ] && command -v mariadb-install-db >/dev/null || wanted+=(mariadb-server)
  [ ${#wanted[@]} -eq 0 ] && return 0
  if ! is_root; then
    loud "cannot install ${wanted[*]}: not root (install them, or run as root with --install)"
    return 0
  fi
  local started=$SECONDS
  say "installing ${wanted[*]} (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  local apt=(apt-get -q -y -o DPkg::Lock::Timeout=300 -o Dpkg::Options::=--force-confdef
    -o Dpkg::Options::=--force-confold)
  if ! "${apt[@]}" update >&2 </dev/null; then
    loud "apt-get update failed; trying the install with the package lists there are"
  fi
  # Debian starts a service after installing it; a container has no init to do so, and the
  # tests use their own servers: policy-rc.d keeps the packages from starting any.
  local policy=/usr/sbin/policy-rc.d made_policy=
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && made_policy=1
  fi
  local pkg
  for pkg in "${wanted[@]}"; do
    if ! "${apt[@]}" install --no-install-recommends "$pkg" >&2 </dev/null; then
      loud "apt-get install $pkg failed: its tests will $WILL"
    fi
  done
  if [ -n "$made_policy" ]; then rm -f "$policy"; fi
  say "install took $((SECONDS - started)) s"
}

# Remove directories of earlier runs whose starting shell is gone.
sweep() {
  local dir owner
  for dir in "$PREFIX"*; do
    [ -f "$dir/$MARK" ] || continue
    owner=$(cat "$dir/owner" 2>/dev/null || echo 0)
    if [ "$owner" != 0 ] && kill -0 "$owner" 2>/dev/null; then
      continue
    fi
    say "removing the leftovers of an earlier run: $dir"
    stop_dir "$dir"
  done
}

start_postgres() {
  local dir=$1 bin port user=postgres
  bin=$(pg_bin)
  if [ -z "$bin" ]; then
    loud "PostgreSQL is not installed: the PostgreSQL tests will $WILL" \
      "(install postgresql, or run .ci/databases.sh start --install as root)"
    return 1
  fi
  is_root || user=$(id -un)
  mkdir -p "$dir/pg" "$dir/pg-run" && chmod 700 "$dir/pg"
  is_root && chown "$user:" "$dir/pg" "$dir/pg-run"
  if ! as_user "$user" "$bin/initdb" -D "$dir/pg" -U memstrata --auth=trust -E UTF8 \
    --locale=C.UTF-8 >"$dir/pg-run/init.log" 2>&1; then
    loud "PostgreSQL initdb failed (see below): the PostgreSQL tests will $WILL"
    tail -n 20 "$dir/pg-run/init.log" >&2
    return 1
  fi
  local try
  for try in 1 2 3; do
    port=$(free_port)
    if as_user "$user" "$bin/pg_ctl" -D "$dir/pg" -l "$dir/pg-run/server.log" -w -t "$START_WAIT_S" \
      -o "-p $port -k $dir/pg-run -c listen_addresses=127.0.0.1 -c fsync=off \
-c synchronous_commit=off -c full_page_writes=off -c max_connections=200" start >&2; then
      break
    fi
    port=
    say "PostgreSQL did not start on a port (try $try); trying another"
  done
  if [ -z "$port" ]; then
    loud "PostgreSQL did not start (see below): the PostgreSQL tests will $WILL"
    tail -n 20 "$dir/pg-run/server.log" >&2
    return 1
  fi
  echo "$port" >"$dir/pg.port"
  if ! as_user "$user" "$bin/createdb" -h "$dir/pg-run" -p "$port" -U memstrata \
    memstrata_test >&2; then
    loud "could not create the PostgreSQL test database: the PostgreSQL tests will $WILL"
    return 1
  fi
  PG_URL="postgresql://memstrata@127.0.0.1:$port/memstrata_test"
  say "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port"
}

start_mariadb() {
  local dir=$1 server port user=mysql client
  server=$(my_server)
  if [ -z "$server" ] || ! command -v mariadb-install-db >/dev/null; then
    loud "MariaDB is not installed: the MySQL/MariaDB tests will $WILL" \
      "(install mariadb-server, or run .ci/databases.sh start --install as root)"
    return 1
  fi
  client=$(command -v mariadb || command -v mysql)
  is_root || user=$(id -un)
  mkdir -p "$dir/my" "$dir/my-run" && chmod 700 "$dir/my"
  is_root && chown "$user:" "$dir/my" "$dir/my-run"
  if ! mariadb-install-db --no-defaults --user="$user" --datadir="$dir/my" \
    --auth-root-authentication-method=normal --skip-test-db >"$dir/my-run/init.log" 2>&1; then
    loud "mariadb-install-db failed (see below): the MySQL/MariaDB tests will $WILL"
    tail -n 20 "$dir/my-run/init.log" >&2
    return 1
  fi
  local sock="$dir/my-run/server.sock" try waited
  for try in 1 2 3; do
    port=$(free_port)
    setsid "$server" --no-defaults --user="$user" --datadir="$dir/my" --socket="$sock" \
      --port="$port" --bind-address=127.0.0.1 --pid-file="$dir/my-run/server.pid" \
      --log-error="$dir/my-run/server.log" --skip-log-bin --innodb-flush-log-at-trx-commit=0 \
      --innodb-doublewrite=0 --innodb-buffer-pool-size=128M --max-connections=200 \
      --character-set-server=utf8mb4 --collation-server=utf8mb4_bin \
      </dev/null >/dev/null 2>&1 &
    echo $! >"$dir/my.launcher"
    waited=0
    while [ $waited -lt $((START_WAIT_S * 5)) ]; do
      if "$client" --no-defaults --socket="$sock" -u root -e 'SELECT 1' >/dev/null 2>&1; then
        break 2
      fi
      kill -0 "$(cat "$dir/my.launcher")" 2>/dev/null || break
      sleep 0.2
      waited=$((waited + 1))
    done
    kill "$(cat "$dir/my.launcher")" 2>/dev/null
    port=
    say "MariaDB did not start on a port (try $try); trying another"
  done
  if [ -z "$port" ]; then
    loud "MariaDB did not start (see below): the MySQL/MariaDB tests will $WILL"
    tail -n 20 "$dir/my-run/server.log" >&2
    return 1
  fi
  echo "$port" >"$dir/my.port"
  if ! "$client" --no-defaults --socket="$sock" -u root >&2 <<'SQL'; then
CREATE DATABASE memstrata_test CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
CREATE USER 'memstrata'@'127.0.0.1' IDENTIFIED BY 'memstrata';
CREATE USER 'memstrata'@'localhost' IDENTIFIED BY 'memstrata';
GRANT ALL PRIVILEGES ON *.* TO 'memstrata'@'127.0.0.1' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON *.* TO 'memstrata'@'localhost' WITH GRANT OPTION;
SQL
    loud "could not create the MariaDB test database: the MySQL/MariaDB tests will $WILL"
    return 1
  fi
  MY_URL="mysql://memstrata:memstrata@127.0.0.1:$port/memstrata_test"
  say "MariaDB $("$server" --version | awk '{print $3}') on 127.0.0.1:$port"
}

stop_dir() {
  local dir=$1 bin pid waited
  [ -f "$dir/$MARK" ] || {
    say "$dir is not a test database directory; leaving it"
    return 0
  }
  if [ -f "$dir/pg/postmaster.pid" ]; then
    bin=$(pg_bin)
    local user=postgres
    is_root || user=$(id -un)
    if [ -n "$bin" ]; then
      as_user "$user" "$bin/pg_ctl" -D "$dir/pg" -m immediate -w -t 30 stop >/dev/null 2>&1
    fi
    pid=$(head -n 1 "$dir/pg/postmaster.pid" 2>/dev/null)
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
  fi
  if [ -f "$dir/my-run/server.pid" ]; then
    pid=$(cat "$dir/my-run/server.pid" 2>/dev/null)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null
      waited=0
      while kill -0 "$pid" 2>/dev/null && [ $waited -lt 150 ]; do
        sleep 0.2
        waited=$((waited + 1))
      done
      kill -9 "$pid" 2>/dev/null
    fi
  fi
  rm -rf -- "$dir"
}

cmd_start() {
  local install=${MEMSTRATA_DB_INSTALL:-0}
  [ "${1:-}" = "--install" ] && install=1
  local started=$SECONDS
  sweep
  [ "$install" = 1 ] && install_packages
  local dir
  dir=$(mktemp -d "${PREFIX}XXXXXX") || {
    loud "cannot make a directory under ${PREFIX%/*}: no database tests"
    return 0
  }
  chmod 755 "$dir"
  touch "$dir/$MARK"
  echo "${MEMSTRATA_DB_OWNER:-$PPID}" >"$dir/owner"
  printf "export MEMSTRATA_TEST_DB_DIR='%s'\n" "$dir"
  PG_URL= MY_URL=
  start_postgres "$dir" || true
  start_mariadb "$dir" || true
  [ -n "$PG_URL" ] && printf "export MEMSTRATA_TEST_POSTGRES_URL='%s'\n" "$PG_URL"
  [ -n "$MY_URL" ] && printf "export MEMSTRATA_TEST_MYSQL_URL='%s'\n" "$MY_URL"
  local pg=up my=up
  [ -n "$PG_URL" ] || pg="MISSING: its tests $WILL"
  [ -n "$MY_URL" ] || my="MISSING: its tests $WILL"
  say "ready in $((SECONDS - started)) s: PostgreSQL $pg, MariaDB $my"
  return 0
}

cmd_stop() {
  local dir=${1:-${MEMSTRATA_TEST_DB_DIR:-}}
  if [ -z "$dir" ]; then
    say "nothing to stop (no directory given and MEMSTRATA_TEST_DB_DIR is unset)"
    return 0
  fi
  local started=$SECONDS
  stop_dir "$dir"
  say "stopped and removed $dir in $((SECONDS - started)) s"
}

case "${1:-}" in
start) shift && cmd_start "$@" ;;
stop) shift && cmd_stop "$@" ;;
*)
  echo "usage: $0 start [--install] | stop [DIR]" >&2
  exit 2
  ;;
esac

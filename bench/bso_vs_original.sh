#!/usr/bin/env bash
# `zeus bso-server` against the original FastAPI server (Zeus 0.16.0) on the
# same request mix (bench/bso_load.cpp), side by side in the same run, on
# SQLite files; docs/benchmarks.md "BSO load".
#
#   bench/bso_vs_original.sh ORIGINAL_VENV [ROUNDS] [POSTGRES_URI]
#
# ORIGINAL_VENV: a venv with `zeus[bso-server]==0.16.0 aiosqlite greenlet`
# (the original pins its own dependencies: keep it apart from .venv/), and
# `asyncpg` for PostgreSQL.
# POSTGRES_URI (optional, postgresql://USER@HOST:PORT/DB): both servers also
# on that database (each its own tables: ours bso_*, the original's Job,
# Trial, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$1"; rounds="${2:-3}"; pg="${3:-}"
zeus=build/bin/zeus; load=build/bin/bso_load
work="$(mktemp -d)"; trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
wait_port() { for _ in $(seq 200); do (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.05; done; return 1; }
for round in $(seq "$rounds"); do
  rm -f "$work"/ours.db*
  "$zeus" bso-server --database "$work/ours.db" --listen 127.0.0.1:18801 >"$work/ours.log" 2>&1 & ours=$!
  wait_port 18801
  echo "round $round ours sqlite saturation: $("$load" --url http://127.0.0.1:18801 --recurrences 10)"
  echo "round $round ours sqlite 2000/s: $("$load" --url http://127.0.0.1:18801 --recurrences 10 --rate 2000)"
  kill "$ours"; wait "$ours" 2>/dev/null || true
  if [[ -n "$pg" ]]; then
    "$zeus" bso-server --database "$pg" --listen 127.0.0.1:18802 >"$work/pg.log" 2>&1 & ours=$!
    wait_port 18802
    echo "round $round ours postgresql saturation: $("$load" --url http://127.0.0.1:18802 --recurrences 10)"
    echo "round $round ours postgresql 2000/s: $("$load" --url http://127.0.0.1:18802 --recurrences 10 --rate 2000)"
    kill "$ours"; wait "$ours" 2>/dev/null || true
  fi
  rm -f "$work"/orig.db*
  "$venv/bin/python" -c "
from sqlalchemy import create_engine
from zeus.optimizer.batch_size.server.database.schema import Base
Base.metadata.create_all(create_engine('sqlite:///$work/orig.db'))"
  ZEUS_BSO_DATABASE_URL="sqlite+aiosqlite:///$work/orig.db" "$venv/bin/uvicorn" \
    zeus.optimizer.batch_size.server.router:app --host 127.0.0.1 --port 18803 --log-level warning \
    >"$work/orig.log" 2>&1 & orig=$!
  wait_port 18803
  echo "round $round original sqlite saturation: $("$load" --url http://127.0.0.1:18803 --recurrences 10)"
  kill "$orig"; wait "$orig" 2>/dev/null || true
  if [[ -n "$pg" ]]; then
    orig_pg="postgresql+asyncpg://${pg#*://}"
    "$venv/bin/python" -c "
import asyncio
from sqlalchemy.ext.asyncio import create_async_engine
from zeus.optimizer.batch_size.server.database.schema import Base
async def main():
    engine = create_async_engine('$orig_pg')
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
    await engine.dispose()
asyncio.run(main())"
    ZEUS_BSO_DATABASE_URL="$orig_pg" "$venv/bin/uvicorn" \
      zeus.optimizer.batch_size.server.router:app --host 127.0.0.1 --port 18804 --log-level warning \
      >"$work/orig-pg.log" 2>&1 & orig=$!
    wait_port 18804
    echo "round $round original postgresql saturation: $("$load" --url http://127.0.0.1:18804 --recurrences 10)"
    kill "$orig"; wait "$orig" 2>/dev/null || true
  fi
done

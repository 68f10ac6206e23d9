# The checks the package and image tests share (sourced; `fail` and the
# server's log file are the caller's).

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# wait_for DESCRIPTION COMMAND...: until COMMAND succeeds, at most 30 s.
wait_for() {
  local what="$1"; shift
  for _ in $(seq 300); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  fail "$what did not come up"
}

# expect_discover SOCKET LOG: zeusd answers GET /discover with the simulator's GPU 0.
expect_discover() {
  local discover
  discover="$(curl -sf --unix-socket "$1" http://zeusd/discover)" || { cat "$2"; fail "zeusd /discover"; }
  echo "$discover" | grep -qF '"gpus":[{"cumulative_energy_available":true,"id":0' || fail "zeusd /discover: $discover"
}

# expect_bso_registration URL LOG: POST /jobs (the original server's route and
# body) registers a job named after its prefix.
expect_bso_registration() {
  local job created
  job='{"job_id":null,"job_id_prefix":"mnist","batch_sizes":[32,64,128],"default_batch_size":64,"beta_knob":null,'
  job+='"max_power":3000,"number_of_gpus":1,"gpu_model":"A100"}'
  created="$(curl -sf -X POST -H 'Content-Type: application/json' -d "$job" "$1/jobs")" \
    || { cat "$2"; fail "bso-server POST /jobs"; }
  echo "$created" | grep -q '"job_id":"mnist-' || fail "bso-server POST /jobs: $created"
}

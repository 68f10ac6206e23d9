# The checks the package and image tests share (sourced; `fail` and the
# server's log file are the caller's).

# listening_port VAR LOG MARKER PID: sets VAR to the port in the first
# "MARKER127.0.0.1:PORT" line of LOG, which a server started on 127.0.0.1:0
# prints with the port the kernel chose (a port picked here first could be
# taken by another process before the server binds it). Fails with LOG when
# process PID exits first or after 30 s.
listening_port() {
  local var="$1" log="$2" marker="$3" pid="$4" line rest
  for _ in $(seq 300); do
    line="$(grep -F -m1 "${marker}127.0.0.1:" "$log" 2>/dev/null)" || line=""
    rest="${line#*"${marker}"127.0.0.1:}"
    case "$rest" in
      [0-9]*[!0-9]*)  # the digits, and the rest of the line after them
        printf -v "$var" '%s' "${rest%%[!0-9]*}"
        return 0 ;;
    esac
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$log" >&2
  fail "no '${marker}127.0.0.1:PORT' line in $log: the server did not say where it listens"
}

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

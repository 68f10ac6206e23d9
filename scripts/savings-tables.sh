#!/usr/bin/env bash
# Regenerates the power-limit savings tables (docs/contributing/power-limit-savings.md)
# and their summary in docs/power-limit-optimizer.md: for each public
# trace, `zeus power-limit simulate --all --format markdown` on the trace's own
# GPU and on every other simulator preset whose power-limit range takes the
# trace's limits (and on the pre-Volta P100, which takes only part of the V100
# trace). Usage: scripts/savings-tables.sh [build-dir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
zeus="${1:-build}/bin/zeus"
doc=docs/contributing/power-limit-savings.md
summary_doc=docs/power-limit-optimizer.md
begin='<!-- savings-tables:begin (scripts/savings-tables.sh) -->'
end='<!-- savings-tables:end -->'
traces=data/power-traces

table() {  # trace-gpu preset title open|closed [note]
    local trace="$traces/summary_power_$1.csv" preset="$2" title="$3" open="$4" note="${5:-}"
    if [ "$open" = open ]; then
        printf '### %s\n\n' "$title"
    else
        printf '<details><summary>%s</summary>\n\n' "$title"
    fi
    [ -n "$note" ] && printf '%s\n\n' "$note"
    "$zeus" power-limit simulate --trace "$trace" --all --format markdown --gpu-model "$preset" 2>/dev/null
    [ "$open" = open ] && printf '\n' || printf '\n</details>\n\n'
}

generated="$(mktemp)"
trap 'rm -f "$generated"' EXIT
{
    echo "$begin"
    echo
    table a40 A40 "A40 trace on the A40 preset (100–300 W)" open
    table a40 A100-SXM4-40GB "A40 trace on the A100-SXM4-40GB preset (100–400 W)" closed
    table a40 L40S "A40 trace on the L40S preset (100–350 W)" closed
    table v100 V100-PCIE-32GB "V100 trace on the V100-PCIE-32GB preset (100–250 W)" open
    table v100 A100-SXM4-40GB "V100 trace on the A100-SXM4-40GB preset (100–400 W)" closed
    table v100 A40 "V100 trace on the A40 preset (100–300 W)" closed
    table v100 RTX6000 "V100 trace on the RTX6000 preset (Turing, 100–260 W)" closed
    table v100 L40S "V100 trace on the L40S preset (Ada, 100–350 W)" closed
    table v100 P100-PCIE-16GB "V100 trace on the P100-PCIE-16GB preset (Pascal, no energy counter; 125–250 W of the trace)" closed \
        "The P100 takes 125–250 W, so the trace's 100 W rows are left out (\`simulate\` says so). Without an energy counter every window is measured by integrating power: windows on the virtual clock integrate the simulated power sensor's readings, so these choices match the V100 rows within one trace step (test \`PreVoltaGpuChoosesAsTheV100DoesOverTheV100Trace\`)."
    echo "$end"
} > "$generated"
python3 - "$doc" "$generated" "$begin" "$end" "$summary_doc" <<'PY'
import re, statistics, sys
doc, generated, begin, end, summary_doc = sys.argv[1:]
text = open(doc).read()
new = open(generated).read().rstrip("\n")
a, b = text.index(begin), text.index(end) + len(end)
open(doc, "w").write(text[:a] + new + text[b:])

# The summary: for each trace on its own GPU (the open tables), the median and
# range of what each selector saves against the maximum limit.
def table(title):
    lines = new[new.index(title):].split("\n")[1:]
    rows = []
    for line in lines:
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip("|").split("|")])
        elif rows:
            break
    return rows[0], rows[2:]

def pct(cell, unit):
    return float(re.search(r"([-+]\d+\.\d)% " + unit, cell).group(1))

out = ["| trace (GPU) | workloads | selector | energy saved: median (range) | time change: median (worst) |",
       "|---|---:|---|---|---|"]
for trace, title in (("A40", "### A40 trace on the A40 preset"), ("V100", "### V100 trace on the V100-PCIE-32GB preset")):
    header, rows = table(title)
    for k in range(3, len(header)):
        e = [0.0 - pct(r[k], "E") for r in rows]
        t = [pct(r[k], "T") for r in rows]
        out.append(f"| {trace} | {len(rows)} | `{header[k]}` | {statistics.median(e):.1f} % ({min(e):.1f} to {max(e):.1f} %) "
                   f"| {statistics.median(t):+.1f} % ({max(t):+.1f} %) |")
summary = "\n".join(out)
sbegin, send = "<!-- savings-summary:begin (scripts/savings-tables.sh) -->", "<!-- savings-summary:end -->"
text = open(summary_doc).read()
a, b = text.index(sbegin) + len(sbegin), text.index(send)
open(summary_doc, "w").write(text[:a] + "\n\n" + summary + "\n\n" + text[b:])
PY
echo "savings-tables: $doc and $summary_doc updated"

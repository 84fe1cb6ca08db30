#!/usr/bin/env bash
# `make test-slurm`: `make sweep-slurm` on a one-node Slurm cluster started here, on
# localhost, in a temporary directory, and its merged files compared with the in-process
# sweep's (byte for byte, wall-time columns and keys aside).
#
# 1. slurm-wlm and munge from Debian, when slurmctld, slurmd, sbatch or munged is missing;
# 2. a munge key and slurm.conf (ClusterName=mcmvm, SlurmctldHost=localhost, one node
#    localhost with this machine's CPUs, state, spool, logs and sockets in the temp dir);
#    munged, slurmctld and slurmd started directly in the foreground, as root;
# 3. `make sweep-slurm` with a small CLAP sweep and a tiny Forest sweep, squeue polled
#    until both arrays are gone (bounded: SLURM_TEST_TIMEOUT seconds, default 600);
# 4. the same sweeps in-process, `mcmvm sweep merge` of the arrays' runs, the comparison;
# 5. always (trap): jobs cancelled, the three daemons stopped by their pids, the temp
#    dir removed (kept when SLURM_TEST_KEEP=1, or on failure, for its logs).
#
# Environment: MCMVM (the binary, default target/release/mcmvm), SLURM_TEST_TIMEOUT,
# SLURM_TEST_PORT (slurmctld's port, slurmd takes the next; default 16817), SLURM_TEST_KEEP.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MCMVM=${MCMVM:-$ROOT/target/release/mcmvm}
TIMEOUT=${SLURM_TEST_TIMEOUT:-600}
PORT=${SLURM_TEST_PORT:-16817}
CLAP_ARGS="--scale 0.02 --workloads bfs,ste --policies s64k,clap"
FOREST_ARGS="--scale 0.05 --workloads ls,hchi --oversub 1.5"
START=$(date +%s)
say() { echo "test-slurm [$(($(date +%s) - START)) s]: $*"; }
fail() {
	echo "test-slurm: FAILED: $*" >&2
	FAILED=1
	exit 1
}
FAILED=0
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo

[ -x "$MCMVM" ] || fail "$MCMVM is not built (make build, or MCMVM=path/to/mcmvm)"

# --- 1. packages -------------------------------------------------------------------------
missing=0
for c in slurmctld slurmd sbatch squeue scancel munged mungekey; do
	command -v "$c" >/dev/null || missing=1
done
if [ $missing = 1 ]; then
	say "installing slurm-wlm and munge (apt-get)"
	$SUDO apt-get update -qq || fail "apt-get update"
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null ||
		fail "apt-get install slurm-wlm munge"
fi
say "$(slurmctld -V), $(munged -V 2>&1 | awk '{print $1}')"

# --- 2. the cluster ----------------------------------------------------------------------
TMP=$(mktemp -d /tmp/mcmvm-slurm.XXXXXX)
chmod 755 "$TMP"
mkdir -p "$TMP"/{etc,munge,state,spool,log,run,slurm,out,ref}
chmod 700 "$TMP/munge"
chmod 755 "$TMP/run"
export SLURM_CONF=$TMP/etc/slurm.conf
MUNGE_SOCKET=$TMP/run/munge.socket.2
PIDS=()
NAMES=()

cleanup() {
	set +e
	if [ -n "${SLURM_UP:-}" ]; then
		scancel --name=mcmvm-clap,mcmvm-forest >/dev/null 2>&1
		for _ in $(seq 30); do
			[ -z "$(squeue -h 2>/dev/null)" ] && break
			sleep 1
		done
	fi
	for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
		kill "${PIDS[i]}" 2>/dev/null
	done
	for pid in "${PIDS[@]}"; do
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
	done
	[ ${#PIDS[@]} -gt 0 ] && echo "test-slurm: stopped ${NAMES[*]} (pids ${PIDS[*]})"
	if [ "$FAILED" = 0 ] && [ -z "${SLURM_TEST_KEEP:-}" ]; then
		rm -rf "$TMP"
	else
		echo "test-slurm: logs kept in $TMP (log/, slurm/)"
	fi
}
# Any non-zero exit (set -e included) counts as a failure: the logs are kept.
trap 'rc=$?; [ $rc = 0 ] || FAILED=1; cleanup' EXIT
trap 'FAILED=1; exit 1' INT TERM

show_logs() {
	for f in "$TMP"/log/*.log "$TMP"/slurm/*.log; do
		[ -f "$f" ] || continue
		echo "--- $f (last lines)" >&2
		tail -n 15 "$f" >&2
	done
}

# Munge: a key of our own, its socket in the temp dir.
mungekey --create --keyfile="$TMP/munge/munge.key" --force >/dev/null 2>&1 ||
	dd if=/dev/urandom of="$TMP/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$TMP/munge/munge.key"
munged --foreground --force --key-file="$TMP/munge/munge.key" --socket="$MUNGE_SOCKET" \
	--pid-file="$TMP/run/munged.pid" --log-file="$TMP/log/munged.log" \
	--seed-file="$TMP/munge/munged.seed" >>"$TMP/log/munged.log" 2>&1 &
PIDS+=($!)
NAMES+=(munged)
for _ in $(seq 50); do
	[ -S "$MUNGE_SOCKET" ] && break
	sleep 0.2
done
[ -S "$MUNGE_SOCKET" ] || {
	show_logs
	fail "munged did not start (no $MUNGE_SOCKET)"
}
munge --socket="$MUNGE_SOCKET" -n | unmunge --socket="$MUNGE_SOCKET" >/dev/null ||
	fail "munge cannot encode and decode a credential"
say "munged up ($MUNGE_SOCKET)"

CPUS=$(nproc)
MEM=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 9 / 10))
cat >"$SLURM_CONF" <<EOF
ClusterName=mcmvm
SlurmctldHost=localhost
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
StateSaveLocation=$TMP/state
SlurmdSpoolDir=$TMP/spool
SlurmctldPidFile=$TMP/run/slurmctld.pid
SlurmdPidFile=$TMP/run/slurmd.pid
SlurmctldLogFile=$TMP/log/slurmctld.log
SlurmdLogFile=$TMP/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
SchedulerType=sched/backfill
MaxArraySize=10000
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -D -i -f "$SLURM_CONF" >>"$TMP/log/slurmctld.out" 2>&1 &
PIDS+=($!)
NAMES+=(slurmctld)
slurmd -D -f "$SLURM_CONF" -N localhost >>"$TMP/log/slurmd.out" 2>&1 &
PIDS+=($!)
NAMES+=(slurmd)
SLURM_UP=1
state=
for _ in $(seq 60); do
	for i in "${!PIDS[@]}"; do
		kill -0 "${PIDS[i]}" 2>/dev/null || {
			show_logs
			cat "$TMP"/log/*.out >&2
			fail "${NAMES[i]} exited (pid ${PIDS[i]}; its log above: port $PORT taken? SLURM_TEST_PORT=...)"
		}
	done
	state=$(sinfo -h -n localhost -o %T 2>/dev/null || true)
	case "$state" in idle*) break ;; esac
	case "$state" in down* | drain*) scontrol update nodename=localhost state=resume >/dev/null 2>&1 || true ;; esac
	sleep 1
done
case "$state" in idle*) ;; *)
	show_logs
	fail "the node is not idle after 60 s (sinfo: '${state:-no answer}')"
	;;
esac
say "slurmctld and slurmd up: node localhost idle, $CPUS CPUs, ${MEM} MB"

# --- 3. the arrays -------------------------------------------------------------------------
make -C "$ROOT" --no-print-directory sweep-slurm MCMVM="$MCMVM" SLURM_DIR="$TMP/slurm" \
	SWEEP_OUT="$TMP/out" CLAP_ARGS="$CLAP_ARGS" FOREST_ARGS="$FOREST_ARGS" ||
	fail "make sweep-slurm"
RUNS=$(cat "$TMP"/slurm/*.plan | wc -l)
SUBMITTED=$(date +%s)

# While they run: the same sweeps in-process (the reference).
"$MCMVM" sweep --suite clap $CLAP_ARGS --out "$TMP/ref/clap" >"$TMP/ref/clap.txt" 2>&1 ||
	fail "in-process clap sweep (see $TMP/ref/clap.txt)"
"$MCMVM" sweep --suite forest $FOREST_ARGS --out "$TMP/ref/forest" >"$TMP/ref/forest.txt" 2>&1 ||
	fail "in-process forest sweep (see $TMP/ref/forest.txt)"
say "in-process reference sweeps done"

last=0
while :; do
	queue=$(squeue -h -r -n mcmvm-clap,mcmvm-forest -o '%t' 2>/dev/null) || fail "squeue failed"
	[ -z "$queue" ] && break
	now=$(date +%s)
	if [ $((now - SUBMITTED)) -ge "$TIMEOUT" ]; then
		squeue >&2 || true
		show_logs
		fail "the arrays did not finish within $TIMEOUT s"
	fi
	if [ $((now - last)) -ge 30 ]; then
		say "waiting: $(echo "$queue" | grep -c R) running, $(echo "$queue" | grep -vc R) pending"
		last=$now
	fi
	sleep 2
done
done_runs=$(find "$TMP/out" -path '*/runs/*.json' ! -name '.*' | wc -l)
say "arrays done: $done_runs of $RUNS run files in $((($(date +%s) - SUBMITTED))) s"

# --- 4. merge and compare ----------------------------------------------------------------
for s in clap forest; do
	"$MCMVM" sweep merge "$TMP/out/$s" >"$TMP/out/$s.merge.txt" 2>&1 || {
		cat "$TMP/out/$s.merge.txt" >&2
		show_logs
		fail "mcmvm sweep merge $TMP/out/$s"
	}
done

# Wall-clock columns and keys differ from run to run, and only they.
WALL='sim_seconds|speed|wall_s|service_wall_s|instr_per_s'
strip_csv() {
	awk -F, -v wall="^($WALL)\$" 'NR == 1 { for (i = 1; i <= NF; i++) drop[i] = ($i ~ wall) }
		{ out = ""; for (i = 1; i <= NF; i++) if (!drop[i]) out = out (out == "" ? "" : ",") $i; print out }' "$1"
}
strip_json() { grep -Ev "^ *\"($WALL)\": " "$1"; }
# What both printed between the header and the "wrote" line, minus the mean speed.
tables() { sed -n '/^Figure 18\|^workload /,/^wrote /p' "$1" | grep -v '^mean speed\|^wrote '; }

compare() {
	local what=$1 a=$2 b=$3
	if ! diff -u "$a" "$b" >"$TMP/diff.txt"; then
		head -n 40 "$TMP/diff.txt" >&2
		fail "$what: merged and in-process differ"
	fi
	echo "  same: $what"
}
cd "$TMP"
for f in clap/clap.csv forest/forest.csv; do
	strip_csv "out/$f" >a.txt
	strip_csv "ref/$f" >b.txt
	compare "$f (without wall-time columns)" a.txt b.txt
done
compare clap/clap_structures.csv out/clap/clap_structures.csv ref/clap/clap_structures.csv
for f in clap/clap.json forest/forest.json; do
	strip_json "out/$f" >a.txt
	strip_json "ref/$f" >b.txt
	compare "$f (without wall-time keys)" a.txt b.txt
done
for s in clap forest; do
	tables "out/$s.merge.txt" >a.txt
	tables "ref/$s.txt" >b.txt
	[ -s a.txt ] || fail "no tables in the $s merge's output"
	compare "$s tables on the terminal" a.txt b.txt
done
cd "$ROOT"
say "PASSED: $RUNS runs as two Slurm arrays, merged = in-process"

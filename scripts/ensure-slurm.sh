#!/usr/bin/env bash
# Makes sure Debian's Slurm (slurm-wlm: slurmctld, slurmd, sbatch, squeue, scancel) and MUNGE are
# installed: the slurm node provider's test starts a one-machine Slurm cluster with its own
# configuration in a temporary directory (the packages' services are never started). Quiet when
# present; prints one line when it installs something.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt-install.sh"

fail() { echo "ensure-slurm: $*" >&2; exit 1; }

missing=()
for tool in slurmctld slurmd sbatch squeue scancel; do
  command -v "$tool" >/dev/null 2>&1 || { missing+=(slurm-wlm); break; }
done
command -v munged >/dev/null 2>&1 || [ -x /usr/sbin/munged ] || missing+=(munge)
[ ${#missing[@]} -eq 0 ] && exit 0
apt_install ensure-slurm "${missing[@]}" || fail "install ${missing[*]} by hand (apt-get install ${missing[*]})"
for tool in slurmctld slurmd sbatch squeue scancel; do
  command -v "$tool" >/dev/null 2>&1 || fail "installed ${missing[*]} but $tool is still not on PATH"
done
[ -x /usr/sbin/munged ] || fail "installed ${missing[*]} but munged is still missing"
echo "ensure-slurm: installed ${missing[*]}"

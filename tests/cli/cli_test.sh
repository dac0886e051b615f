#!/usr/bin/env bash
# Runs the built `aj` binary and checks exit codes, stdout and stderr.
#
#   cli_test.sh AJ_BINARY SOURCE_DIR GROUP [BUNDLE_CHECK_BINARY]
#
# GROUP is one of: usage, template, errors, run, render, bundle, place. JSON output is parsed
# back with python3 (standard library only) and checked field by field; every
# expected value below is derived by hand from the fixture or example files.
set -uo pipefail

AJ=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$2
GROUP=$3
BUNDLE_CHECK=${4:-}
EXAMPLES=$SRC/examples/.azure_jobs
DATA=$SRC/tests/data/cli

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
checks=0
name=""

case_() { name=$1; }

fail() {
	failures=$((failures + 1))
	echo "FAIL [$name]: $*"
	echo "  command: ${last_cmd[*]}"
	echo "  exit: $rc"
	sed 's/^/  stdout| /' "$tmp/out" | head -40
	sed 's/^/  stderr| /' "$tmp/err" | head -40
}

# aj ARGS...: run the binary, keeping exit status, stdout and stderr.
aj() {
	last_cmd=("$AJ" "$@")
	"$AJ" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

expect_rc() {
	checks=$((checks + 1))
	[ "$rc" -eq "$1" ] || fail "expected exit status $1, got $rc"
}

expect_out() {
	checks=$((checks + 1))
	grep -qF -- "$1" "$tmp/out" || fail "stdout lacks: $1"
}

expect_err() {
	checks=$((checks + 1))
	grep -qF -- "$1" "$tmp/err" || fail "stderr lacks: $1"
}

expect_out_lacks() {
	checks=$((checks + 1))
	! grep -qF -- "$1" "$tmp/out" || fail "stdout should not contain: $1"
}

expect_err_empty() {
	checks=$((checks + 1))
	[ ! -s "$tmp/err" ] || fail "stderr should be empty"
}

expect_out_empty() {
	checks=$((checks + 1))
	[ ! -s "$tmp/out" ] || fail "stdout should be empty"
}

# Every stderr line must name a file (FILE:LINE...) or start with "aj".
expect_err_lines_located() {
	checks=$((checks + 1))
	if grep -vE '^(aj[ :]|[^ :]+\.yaml(:[0-9]+(:[0-9]+)?)?: )' "$tmp/err" | grep -q .; then
		fail "stderr has a line that names no file"
	fi
}

# json EXPR...: parse stdout as JSON into d and check each Python expression.
json() {
	checks=$((checks + 1))
	if ! python3 - "$tmp/out" "$@" >"$tmp/py" 2>&1 <<'EOF'
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
bad = [e for e in sys.argv[2:] if not eval(e, {"d": d})]
for e in bad:
    print("  false: " + e)
sys.exit(1 if bad else 0)
EOF
	then
		fail "JSON check failed"
		cat "$tmp/py"
	fi
}

group_usage() {
	case_ "no arguments is a usage error"
	aj
	expect_rc 2
	expect_err "usage: aj"

	case_ "--version"
	aj --version
	expect_rc 0
	expect_out "aj 0.1.0"

	case_ "--help lists every command"
	aj --help
	expect_rc 0
	for c in "run" "render" "template list" "template show" "template validate"; do
		expect_out "aj $c "
	done

	for c in "run" "render" "template list" "template show" "template validate"; do
		case_ "aj $c --help"
		# shellcheck disable=SC2086
		aj $c --help
		expect_rc 0
		expect_out "usage: aj $c"
		expect_err_empty
	done

	case_ "--help lists the cluster commands"
	aj --help
	for c in "list" "status" "cancel" "logs" "delete"; do
		expect_out "aj $c "
	done

	case_ "--help names the environment variables aj reads"
	aj --help
	for v in AJ_HOME KUBECONFIG AJ_AZURE_WORKSPACE AJ_AZURE_ARM_ENDPOINT AJ_AZURE_CA_FILE \
		AJ_AZURE_BLOB_ENDPOINT AJ_CODE_HELPER_TIMEOUT AJ_EXEC_PATH AZURE_TENANT_ID; do
		expect_out "$v"
	done

	case_ "aj logs needs a name"
	aj logs
	expect_rc 2
	expect_err "aj logs: missing AjJob NAME"

	case_ "aj logs: --previous cannot be followed"
	aj logs j -p -f
	expect_rc 2
	expect_err "aj logs: --previous shows containers that have ended: it cannot be followed"

	case_ "aj logs: -p is --previous here, not --processes"
	aj logs --help
	expect_out "  -p, --previous"

	case_ "aj logs: --since takes a duration"
	aj logs j --since 5x
	expect_rc 2
	expect_err "aj logs: --since: expected a duration such as 90s, 5m or 1h30m, got '5x'"
	aj logs j --since 0s
	expect_rc 2
	aj logs j --since 1h30
	expect_rc 2

	case_ "aj logs: --tail and --rank take numbers"
	aj logs j --tail -1
	expect_rc 2
	expect_err "aj logs: --tail: expected a number >= 0, got '-1'"
	aj logs j --rank x
	expect_rc 2
	expect_err "aj logs: --rank: expected a number >= 0, got 'x'"

	case_ "aj list --phase is checked against the phases"
	aj list --phase Runing
	expect_rc 2
	expect_err "aj list: --phase: unknown phase 'Runing': did you mean Running?"
	aj list --phase nope
	expect_rc 2
	expect_err "aj list: --phase: unknown phase 'nope' (Pending, Submitted, Running, Succeeded, Failed, Cancelled, Cancelling)"

	case_ "aj list: -w is --watch"
	aj list --help
	expect_out "  -w, --watch"

	case_ "aj delete needs names or --all, not both"
	aj delete
	expect_rc 2
	expect_err "aj delete: missing AjJob NAME (or --all; try aj delete --help)"
	aj delete a --all
	expect_rc 2
	expect_err "aj delete: --all and NAMEs exclude each other"
	aj delete a --phase Succeeded
	expect_rc 2
	expect_err "aj delete: --phase selects with --all"
	aj delete a --wait --no-wait
	expect_rc 2
	expect_err "aj delete: --wait and --no-wait exclude each other"

	case_ "aj run --follow submits"
	aj run -t volcano --dry-run --follow python train.py
	expect_rc 2
	expect_err "aj run: --follow follows a submitted AjJob: it excludes --dry-run and --amlt"
	aj run -t volcano --wait --follow python train.py
	expect_rc 2
	expect_err "aj run: --wait and --follow exclude each other"

	case_ "aj help run is aj run --help"
	aj help run
	expect_rc 0
	expect_out "usage: aj run -t NAME"
	expect_err_empty

	case_ "aj help template show"
	aj help template show
	expect_rc 0
	expect_out "usage: aj template show"

	case_ "a misspelt flag gets the nearest one"
	aj run --dry-rn python train.py
	expect_rc 2
	expect_err "aj run: unknown option '--dry-rn': did you mean --dry-run?"

	case_ "a flag the command does not take is not suggested"
	aj render --wai python train.py
	expect_rc 2
	expect_err "aj render: unknown option '--wai' (try aj render --help)"

	case_ "-n NAME, a kubectl habit, points at --namespace"
	aj run -n training python train.py
	expect_rc 2
	expect_err "aj run: -n: expected a positive integer, got 'training' (-n is the node count here; the namespace is --namespace)"

	case_ "-n where it is no node count: says so and points at --namespace"
	aj list -n training
	expect_rc 2
	expect_err "aj list: unknown option '-n': the namespace is --namespace NS (-n is the node count of aj run and aj render)"
	expect_out_empty

	case_ "...in every command that takes a namespace, -nNS too"
	for c in status cancel logs delete; do
		aj "$c" -ntraining job1
		expect_rc 2
		expect_err "aj $c: unknown option '-ntraining': the namespace is --namespace NS (-n is the node count of aj run and aj render)"
	done
	aj code upload -t volcano -n training
	expect_rc 2
	expect_err "aj code upload: unknown option '-n': the namespace is --namespace NS (-n is the node count of aj run and aj render)"

	case_ "...and a command without a namespace says it has none"
	aj template list -n training
	expect_rc 2
	expect_err "aj template list: unknown option '-n': aj template list takes no namespace (-n is the node count of aj run and aj render)"
	aj code stats -t volcano -n 2
	expect_rc 2
	expect_err "aj code stats: unknown option '-n': aj code stats takes no namespace (-n is the node count of aj run and aj render)"

	case_ "template without subcommand"
	aj template
	expect_rc 2

	case_ "unknown command"
	aj frobnicate
	expect_rc 2
	expect_err "unknown command 'frobnicate'"

	case_ "unknown template subcommand"
	aj template frob
	expect_rc 2
	expect_err "unknown subcommand 'frob'"

	case_ "a group alone lists all its subcommands"
	aj code
	expect_rc 2
	expect_err "aj code upload"
	expect_err "aj code stats"

	case_ "a group's --help lists its subcommands and succeeds"
	aj code --help
	expect_rc 0
	expect_out "usage: aj code SUBCOMMAND"
	expect_out "aj code upload"

	case_ "an unknown subcommand names every one there is"
	aj code foo
	expect_rc 2
	expect_err "aj code: unknown subcommand 'foo' (stats, upload)"

	case_ "an Azure group alone is a group, not an unknown command"
	aj quota
	expect_rc 2
	expect_err "aj quota list"

	case_ "aj --help gives every exit status"
	aj --help
	expect_rc 0
	expect_out "130 after Ctrl-C"

	case_ "unknown option"
	aj run --bogus -t volcano --dry-run echo
	expect_rc 2
	expect_err "unknown option '--bogus'"

	case_ "option of another command"
	aj template list --jobspec
	expect_rc 2
	expect_err "unknown option '--jobspec'"

	case_ "-n needs a number"
	aj run -t volcano -n two --dry-run echo
	expect_rc 2
	expect_err "-n: expected a positive integer, got 'two'"

	case_ "-n 0 is refused"
	aj render -t volcano -n 0
	expect_rc 2
	expect_err "-n: expected a positive integer, got '0'"

	case_ "--nodes=VALUE form is checked too"
	aj render -t volcano --nodes=1x
	expect_rc 2
	expect_err "--nodes: expected a positive integer, got '1x'"

	case_ "-p without a value"
	aj render -t volcano -p
	expect_rc 2
	expect_err "-p needs a value"

	case_ "flag given a value"
	aj run --dry-run=yes -t volcano echo
	expect_rc 2
	expect_err "--dry-run takes no value"

	case_ "bad output format"
	aj template show -o xml volcano
	expect_rc 2
	expect_err "-o: expected yaml or json, got 'xml'"

	case_ "run without -t"
	aj run --dry-run echo hi
	expect_rc 2
	expect_err "no template"

	case_ "run without a command"
	AJ_HOME=$EXAMPLES aj run -t volcano --dry-run
	expect_rc 2
	expect_err "missing COMMAND"

	case_ "run without --dry-run needs a cluster"
	AJ_HOME=$EXAMPLES KUBECONFIG=$tmp/no-such-kubeconfig aj run -t volcano python train.py
	expect_rc 1
	expect_err "KUBECONFIG=$tmp/no-such-kubeconfig: none of these files exists"
	expect_out_empty

	case_ "--wait needs a submission"
	AJ_HOME=$EXAMPLES aj run -t volcano --dry-run --wait python train.py
	expect_rc 2
	expect_err "--wait follows a submitted AjJob"

	case_ "invalid --name"
	AJ_HOME=$EXAMPLES aj run -t volcano --name Bad_Name --dry-run echo
	expect_rc 2
	expect_err "--name: 'Bad_Name' is not a valid name"

	case_ "--name longer than 63"
	AJ_HOME=$EXAMPLES aj run -t volcano --name "$(printf 'a%.0s' $(seq 64))" --dry-run echo
	expect_rc 2

	case_ "template show needs a name"
	aj template show
	expect_rc 2
	expect_err "missing template NAME"

	case_ "template show takes one name"
	AJ_HOME=$EXAMPLES aj template show volcano aml
	expect_rc 2
	expect_err "unexpected argument 'aml'"

	case_ "template name may not climb out of template/"
	AJ_HOME=$EXAMPLES aj template show ../account/default
	expect_rc 2
	expect_err "invalid template name"

	case_ "--jobspec and --amlt together"
	AJ_HOME=$EXAMPLES aj render -t volcano --jobspec --amlt
	expect_rc 2
}

group_template() {
	export AJ_HOME=$EXAMPLES

	case_ "list: one row per file, bases as written, range SKU compact"
	aj template list
	expect_rc 0
	expect_err_empty
	checks=$((checks + 1))
	python3 - "$tmp/out" >"$tmp/py" 2>&1 <<'EOF' || fail "template list rows"
import sys
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()]
assert rows[0] == ["NAME", "BASES", "SERVICE", "SKU", "STATUS"], rows[0]
got = {r[0]: r[1:] for r in rows[1:]}
want = {
    "aml": ["base,account.default,storage.default,environment.aml", "aml", "G1", "ok"],
    "anywhere": ["-", "placement", "-", "ok"],
    "base": ["-", "-", "-", "ok"],
    "heterogeneous": ["base,environment.volcano", "volcano", "heterogeneous", "ok"],
    "kube": ["base,environment.volcano", "kube", "{nodes}xG{processes}", "ok"],
    "multinode": ["volcano", "volcano", "range{1,2-4,8+}", "ok"],
    "nested": ["volcano", "volcano", "{nodes}xG{processes}", "ok"],
    "pretrain": ["multinode", "volcano", "range{1,2-4,8+}", "ok"],
    "sing": ["base,account.default,storage.default,environment.sing", "sing",
             "{nodes}x40G{processes}-A100-NvLink", "ok"],
    "volcano": ["base,environment.volcano", "volcano", "{nodes}xG{processes}", "ok"],
    "volcano-cpu": ["volcano", "volcano", "{nodes}xC{processes}", "ok"],
}
assert list(got) == sorted(want), list(got)
for k, v in want.items():
    assert got[k] == v, (k, got[k], v)
EOF
	[ -s "$tmp/py" ] && cat "$tmp/py"

	case_ "show (V15 analogue): chain comment, inherited and own values"
	AJ_HOME=$DATA/show aj template show child
	expect_rc 0
	expect_out "# inheritance: base -> child"
	expect_out "service: aml"
	expect_out "name: myCluster"

	case_ "show -o json is the config only, keys in first-seen order"
	AJ_HOME=$DATA/show aj template show -o json child
	expect_rc 0
	json "list(d) == ['target', 'jobs']" \
	     "d['target'] == {'service': 'aml', 'name': 'myCluster'}" \
	     "d['jobs'] == [{'sku': 'G1'}]"

	case_ "show the four-level chain merged"
	aj template show -o json pretrain
	expect_rc 0
	json "d['target']['service'] == 'volcano'" \
	     "d['target']['labels'] == {'team': 'research', 'project': 'llm-pretrain'}" \
	     "d['target']['priority_class'] == 'high-priority'" \
	     "d['environment']['image'] == 'nvcr.io/nvidia/pytorch:24.05-py3'" \
	     "d['environment']['setup'] == ['python -m pip install -e .']" \
	     "d['code']['ignore'] == ['data/', 'outputs/', 'checkpoints/', '*.ckpt', 'wandb/']" \
	     "len(d['jobs']) == 1" \
	     "d['jobs'][0]['name'] == 'pretrain'" \
	     "d['jobs'][0]['instance_count'] == 4" \
	     "d['jobs'][0]['process_count_per_node'] == 8" \
	     "d['jobs'][0]['sku'] == {'1': '1xG{processes}', '2-4': '{nodes}xG{processes}', '8+': '{nodes}xG{processes}-NvLink'}" \
	     "d['jobs'][0]['command'] == ['nvidia-smi']" \
	     "d['jobs'][0]['submit_args']['env'] == {'PYTHONUNBUFFERED': '1', 'NCCL_DEBUG': 'WARN', 'AMLT_PERSISTENT_VOLUME_NAME': 'training-shared', 'AMLT_PERSISTENT_VOLUME_MOUNT_DIR': '/mnt/shared', 'WANDB_PROJECT': 'llm-pretrain', 'TOKENIZERS_PARALLELISM': 'false'}" \
	     "d['jobs'][0]['submit_args']['container_args'] == {'shm_size': '256Gi'}" \
	     "d['_extra'] == {'notes': 'pretraining runs, one per data mix'}"

	case_ "show's comment names the direct bases, then the template (docs/cli.md)"
	aj template show pretrain
	expect_rc 0
	checks=$((checks + 1))
	[ "$(head -n 1 "$tmp/out")" = "# inheritance: multinode -> pretrain" ] || fail "first line: $(head -n 1 "$tmp/out")"

	case_ "a missing -t template names the nearest one (docs/templates.md)"
	aj run -t volcano-cp --dry-run python train.py
	expect_rc 1
	expect_err "aj: template/volcano-cp: file not found: $EXAMPLES/template/volcano-cp.yaml (did you mean template/volcano-cpu?)"
	expect_out_empty

	case_ "show accepts NAME.yaml and template/NAME"
	aj template show -o json template/volcano.yaml
	expect_rc 0
	json "d['target']['queue'] == 'default'"

	case_ "show a missing template"
	aj template show nosuch
	expect_rc 1
	expect_err "nosuch"
	expect_out_empty

	case_ "validate every example"
	aj template validate
	expect_rc 0
	expect_out "11 template(s) valid"
	expect_out_lacks "invalid"
	expect_err_empty

	case_ "validate one"
	aj template validate heterogeneous
	expect_rc 0
	expect_out "1 template(s) valid"

	export AJ_HOME=$DATA/validate
	case_ "validate (V14 analogues): leaf checks, components accepted"
	aj template validate
	expect_rc 1
	expect_out "3 template(s) valid"
	expect_out "3 template(s) invalid: nojobs, nosku, notarget"
	expect_err "template/nojobs.yaml"
	expect_err "jobs"
	expect_err "template/notarget.yaml"
	expect_err "target"
	expect_err "template/nosku.yaml:7:7: config.jobs[0]"
	expect_err "sku"
	expect_err_lines_located

	case_ "validate a component alone"
	aj template validate component
	expect_rc 0
	expect_out "1 template(s) valid"

	case_ "validate does not need -n or -p"
	aj template validate noshape
	expect_rc 0
	expect_out "1 template(s) valid"
	expect_err_empty

	case_ "validate one invalid"
	aj template validate nosku
	expect_rc 1
	expect_out "0 template(s) valid"
	expect_out "1 template(s) invalid: nosku"

	export AJ_HOME=$DATA/components
	case_ "validate a component outside template/: its whole tree, where a leaf merges it"
	aj template validate storage/typo
	expect_rc 1
	expect_out "1 template(s) invalid: storage/typo"
	expect_err "storage/typo.yaml:7:7: config.storage.shared.mount_dri: unknown key (did you mean \"mount_dir\"?)"
	expect_err_lines_located

	case_ "validate a good component outside template/"
	aj template validate storage/good.yaml
	expect_rc 0
	expect_out "1 template(s) valid"
	expect_err_empty

	case_ "validate checks a component's _extra parts and tasks against their readers' keys"
	aj template validate
	expect_rc 1
	expect_out "1 template(s) valid"
	expect_out "1 template(s) invalid: tasks"
	expect_err "template/tasks.yaml:8:41: config._extra.volcano.tasks.worker.node_selectr: unknown key (did you mean \"node_selector\"?)"
	expect_err "template/tasks.yaml:9:42: config._extra.code_upload.blob.containr: unknown key (did you mean \"container\"?)"
	expect_err_lines_located

	case_ "a component name stays below the home"
	aj template validate ../storage/good
	expect_rc 2
	expect_err "invalid template name"

	case_ "missing template home"
	AJ_HOME=$tmp/nowhere aj template list
	expect_rc 1
	expect_err "$tmp/nowhere"
	expect_err "template home not found"

	case_ "default home is .azure_jobs in the current directory"
	(cd "$SRC/examples" && unset AJ_HOME && "$AJ" template validate volcano) >"$tmp/out" 2>"$tmp/err"
	rc=$?
	expect_rc 0
	expect_out "1 template(s) valid"
}

group_errors() {
	export AJ_HOME=$DATA/errors

	case_ "missing base file"
	aj template show missing
	expect_rc 1
	expect_err "template/missing.yaml"
	expect_err "storage/nothere"
	expect_err_lines_located

	case_ "inheritance cycle shows the chain"
	aj template show cycle-a
	expect_rc 1
	expect_err "template/cycle-a -> template/cycle-b -> template/cycle-a"

	case_ "malformed YAML names file, line and column"
	aj render -t malformed
	expect_rc 1
	expect_err "template/malformed.yaml:6:"
	expect_err_lines_located

	case_ "bad base type"
	aj template show badbase
	expect_rc 1
	expect_err "template/badbase.yaml:1:7"
	expect_err "base"

	case_ "bad type names the key path and the value"
	aj render -t badtype -n 1
	expect_rc 1
	expect_err "template/badtype.yaml:4:20: config.target.gpus_per_node"
	expect_err "eight"
	expect_err_lines_located

	case_ "validate reports every invalid template and exits 1"
	aj template validate
	expect_rc 1
	expect_out "1 template(s) valid"
	expect_out "6 template(s) invalid: badbase, badtype, cycle-a, cycle-b, malformed, missing"

	case_ "list shows every template, marks the broken ones and fails"
	aj template list
	expect_rc 1
	expect_err "circular template inheritance"
	expect_err "template/badbase.yaml:1:7"
	checks=$((checks + 1))
	python3 - "$tmp/out" >"$tmp/py" 2>&1 <<'EOF' || fail "template list rows"
import sys
rows = {r.split()[0]: r.split()[1:] for r in open(sys.argv[1]).read().splitlines()[1:]}
assert sorted(rows) == ["badbase", "badtype", "cycle-a", "cycle-b", "malformed", "missing", "ok"], rows
# a broken file: STATUS error; its direct bases when its own base is readable
assert rows["badbase"] == ["?", "?", "?", "error"], rows["badbase"]
assert rows["malformed"] == ["?", "?", "?", "error"], rows["malformed"]
assert rows["cycle-a"] == ["cycle-b", "?", "?", "error"], rows["cycle-a"]
assert rows["cycle-b"] == ["cycle-a", "?", "?", "error"], rows["cycle-b"]
assert rows["missing"] == ["storage.nothere", "?", "?", "error"], rows["missing"]
# badtype resolves; its bad value is only a problem for the JobSpec
assert rows["badtype"] == ["ok", "volcano", "{nodes}xG{processes}", "ok"], rows["badtype"]
assert rows["ok"] == ["storage.default", "volcano", "{nodes}xG{processes}", "ok"], rows["ok"]
EOF
	[ -s "$tmp/py" ] && cat "$tmp/py"

	case_ "missing -n with no instance_count fails before anything is printed"
	aj render -t ok
	expect_rc 1
	expect_err "-n"
	expect_out_empty

	case_ "-n given: the same template renders"
	aj render -t ok -n 2 --name ok -o json
	expect_rc 0
	json "d['kind'] == 'Job'"

	case_ "run --dry-run refuses an invalid job too"
	aj run -t ok --dry-run echo
	expect_rc 1
	expect_out_empty

	# aj code stats needs the code part alone: the rest of a template not
	# finished yet is a warning (draft.yaml has no image and no target.name).
	mkdir -p "$tmp/proj/data"
	printf 'x\n' >"$tmp/proj/a.py"
	printf 'y\n' >"$tmp/proj/data/big"
	pushd "$tmp/proj" >/dev/null || exit 1
	case_ "code stats of a template incomplete elsewhere: the stats, and warnings"
	AJ_HOME=$DATA/draft aj code stats -t draft
	expect_rc 0
	expect_out "included: 1 files, 2 B"
	expect_out "  code.ignore[0]: data/: 1 files, 2 B"
	expect_err "aj code stats: warning: the template is not complete elsewhere (these stats need only its code part):"
	expect_err "  $DATA/draft/template/draft.yaml: config.environment.image: required for service aml"
	expect_err "  $DATA/draft/template/draft.yaml: config.target.name: required for service aml (the AML compute)"
	case_ "...while render still refuses it"
	AJ_HOME=$DATA/draft aj render -t draft python train.py
	expect_rc 1
	expect_err "$DATA/draft/template/draft.yaml: config.environment.image: required for service aml"
	expect_out_empty
	case_ "code stats of a template whose code part is wrong fails"
	AJ_HOME=$DATA/draft aj code stats -t badcode
	expect_rc 1
	expect_err "$DATA/draft/template/badcode.yaml:7:13: config.code.ignore: expected list of strings, got string \"data/\""
	expect_out_empty
	case_ "...as does one that does not resolve"
	AJ_HOME=$DATA/errors aj code stats -t missing
	expect_rc 1
	expect_err "template/missing -> storage/nothere: file not found"
	expect_out_empty
	popd >/dev/null || exit 1
}

# Arguments a shell would mangle; they must reach spec.command unchanged.
hostile=("python" "train.py" "a b" "\$(touch /tmp/aj-pwned)" "'" "\"" "" $'line1\nline2'
	 "--lr=3e-4" "-n" "5" "*" "\\" "é")

group_run() {
	export AJ_HOME=$EXAMPLES

	case_ "dry-run AjJob, field by field"
	aj run -t volcano --name train-1 --dry-run -o json -- "${hostile[@]}"
	expect_rc 0
	expect_err_empty
	json "d['apiVersion'] == 'aj.dev/v1alpha1'" \
	     "d['kind'] == 'AjJob'" \
	     "d['metadata'] == {'name': 'train-1', 'namespace': 'training'}" \
	     "d['spec']['name'] == 'template/volcano'" \
	     "d['spec']['template']['base'] == ['base', 'environment.volcano']" \
	     "d['spec']['template']['config']['target']['gpus_per_node'] == 8" \
	     "d['spec']['template']['config']['jobs'][0]['instance_count'] == 2" \
	     "'base' not in d['spec']['template']['config']" \
	     "sorted(d['spec']['components']) == ['environment/base', 'environment/volcano', 'template/base']" \
	     "d['spec']['components']['environment/volcano']['base'] == ['base']" \
	     "d['spec']['components']['environment/volcano']['config']['environment']['image'] == 'nvcr.io/nvidia/pytorch:24.05-py3'" \
	     "d['spec']['components']['template/base'] == {'base': [], 'config': {'code': {'ignore': ['data/', 'outputs/', 'checkpoints/', '*.ckpt', 'wandb/']}}}" \
	     "d['spec']['components']['environment/base']['base'] == []" \
	     "d['spec']['command'] == ['python', 'train.py', 'a b', '\$(touch /tmp/aj-pwned)', \"'\", '\"', '', 'line1\\nline2', '--lr=3e-4', '-n', '5', '*', '\\\\', '\\u00e9']" \
	     "d['spec']['nodes'] == 2" \
	     "d['spec']['processes'] == 8" \
	     "d['spec']['processesPerNode'] == 1"
	checks=$((checks + 1))
	[ ! -e /tmp/aj-pwned ] || fail "a command argument was run by a shell"

	case_ "placement leaf: one AjJob carrying every candidate's files, the shape as given"
	aj run -t anywhere --name any-1 --dry-run -o json python train.py
	expect_rc 0
	expect_err_empty
	json "d['metadata'] == {'name': 'any-1', 'namespace': 'training'}" \
	     "d['spec']['name'] == 'template/anywhere'" \
	     "d['spec']['template'] == {'base': [], 'config': {'placement': {'candidates': ['volcano', 'kube', 'sing'], 'max_wait': '15m'}}}" \
	     "sorted(d['spec']['components']) == ['account/default', 'environment/base', 'environment/sing', 'environment/volcano', 'storage/default', 'template/base', 'template/kube', 'template/sing', 'template/volcano']" \
	     "d['spec']['components']['template/kube']['config']['target']['service'] == 'kube'" \
	     "d['spec']['components']['template/sing']['base'] == ['base', 'account.default', 'storage.default', 'environment.sing']" \
	     "len(d['spec']['code']['digest']) == 64" \
	     "'nodes' not in d['spec'] and 'processes' not in d['spec'] and 'processesPerNode' not in d['spec']" \
	     "d['spec']['command'] == ['python', 'train.py']"
	aj run -t anywhere --name any-1 -n 3 --dry-run -o json python train.py
	expect_rc 0
	json "d['spec']['nodes'] == 3" "'processes' not in d['spec']"

	case_ "placement leaf: a candidate in another namespace is left out, said on stderr"
	aj run -t anywhere --name any-2 --namespace research --dry-run -o json python train.py
	expect_rc 0
	expect_err "aj run: warning: template/volcano:"
	expect_err "anywhere.yaml:10:18: config.placement.candidates[0]: template/volcano is left out: its target.namespace is training, not the AjJob's namespace research"
	expect_err "template/kube is left out"
	json "d['metadata']['namespace'] == 'research'" \
	     "sorted(d['spec']['components']) == ['account/default', 'environment/base', 'environment/sing', 'storage/default', 'template/base', 'template/sing']"

	case_ "placement leaf: amlt takes one target"
	aj run -t anywhere --amlt --dry-run python train.py
	expect_rc 1
	expect_err "config.placement: template/anywhere chooses among candidate templates: amlt takes one (--amlt)"

	case_ "command line shape wins; --namespace"
	aj run -t volcano -n 3 -p 4 --ppn 2 --namespace research --name j --dry-run -o json python train.py
	expect_rc 0
	json "d['metadata']['namespace'] == 'research'" \
	     "d['spec']['nodes'] == 3" "d['spec']['processes'] == 4" \
	     "d['spec']['processesPerNode'] == 2" \
	     "d['spec']['command'] == ['python', 'train.py']"

	case_ "options end at the first non-option: the rest is the user's"
	aj run -t volcano --name j --dry-run -o json python train.py -n 7 --name x
	expect_rc 0
	json "d['spec']['nodes'] == 2" "d['metadata']['name'] == 'j'" \
	     "d['spec']['command'] == ['python', 'train.py', '-n', '7', '--name', 'x']"

	case_ "--ttl: spec.ttlSecondsAfterFinished in seconds; 0 keeps; absent without it"
	aj run -t volcano --name j --dry-run -o json --ttl 1h30m python train.py
	expect_rc 0
	json "d['spec']['ttlSecondsAfterFinished'] == 5400"
	aj run -t volcano --name j --dry-run -o json --ttl 0 python train.py
	expect_rc 0
	json "d['spec']['ttlSecondsAfterFinished'] == 0"
	aj run -t volcano --name j --dry-run -o json python train.py
	expect_rc 0
	json "'ttlSecondsAfterFinished' not in d['spec']"
	aj run -t volcano --dry-run --ttl 1d python train.py
	expect_rc 2
	expect_err "aj run: --ttl: expected a duration such as 90s, 5m or 1h30m, got '1d'"
	aj run -t volcano --dry-run --ttl 600000h python train.py
	expect_rc 2
	expect_err "aj run: --ttl: at most 2147483647 seconds, got '600000h'"

	case_ "derived name: first job's name plus a random suffix"
	aj run -t volcano --dry-run -o json echo hi
	expect_rc 0
	json "__import__('re').fullmatch('train-[a-z0-9]{5}', d['metadata']['name']) is not None"

	case_ "derived name: lowercased, other characters to '-', a letter first"
	AJ_HOME=$DATA/run aj run -t digits --dry-run -o json echo
	expect_rc 0
	json "__import__('re').fullmatch('aj-2024-sweep-a-[a-z0-9]{5}', d['metadata']['name']) is not None"

	case_ "derived name: the job name part is cut at 40 characters"
	AJ_HOME=$DATA/run aj run -t long --dry-run -o json echo
	expect_rc 0
	json "__import__('re').fullmatch('pretrain-the-very-large-language-model-o-[a-z0-9]{5}', d['metadata']['name']) is not None"

	case_ "a --name the backend cannot use is refused before printing"
	aj run -t volcano --name 1abc --dry-run echo
	expect_rc 1
	expect_err "metadata.name"
	expect_out_empty

	case_ "a --name too long for the pods it would make"
	aj run -t heterogeneous --name "$(printf 'a%.0s' $(seq 50))" --dry-run echo
	expect_rc 1
	expect_err "a100-worker-1 is 64 characters"
	expect_out_empty

	case_ "derived name of a four-level chain; component keys"
	aj run -t pretrain --dry-run -o json nvidia-smi
	expect_rc 0
	json "__import__('re').fullmatch('pretrain-[a-z0-9]{5}', d['metadata']['name']) is not None" \
	     "d['spec']['template']['base'] == ['multinode']" \
	     "sorted(d['spec']['components']) == ['environment/base', 'environment/volcano', 'template/base', 'template/multinode', 'template/volcano']" \
	     "d['spec']['components']['template/multinode']['base'] == ['volcano']" \
	     "d['spec']['nodes'] == 4" "d['spec']['processes'] == 8" "d['spec']['processesPerNode'] == 8"

	case_ "YAML output by default"
	aj run -t volcano --name j --dry-run python train.py
	expect_rc 0
	expect_out "apiVersion: aj.dev/v1alpha1"
	expect_out "kind: AjJob"

	case_ "AML AjJob carries the account and storage components"
	aj run -t aml --name a --dry-run -o json python train.py
	expect_rc 0
	json "d['metadata']['namespace'] == 'default'" \
	     "d['spec']['template']['base'] == ['base', 'account.default', 'storage.default', 'environment.aml']" \
	     "sorted(d['spec']['components']) == ['account/default', 'environment/aml', 'environment/base', 'storage/default', 'template/base']" \
	     "d['spec']['nodes'] == 1" "d['spec']['processes'] == 1"

	case_ "heterogeneous: no global shape in the AjJob"
	aj run -t heterogeneous --name h --dry-run -o json python train.py
	expect_rc 0
	json "'nodes' not in d['spec']" "'processes' not in d['spec']" \
	     "d['spec']['command'] == ['python', 'train.py']"

	case_ "heterogeneous rejects -n"
	aj run -t heterogeneous -n 2 --dry-run python train.py
	expect_rc 1
	expect_err "-n"
	expect_out_empty

	case_ "heterogeneous rejects --amlt"
	aj run -t heterogeneous --amlt --dry-run python train.py
	expect_rc 1
	expect_err "--amlt"

	case_ "--amlt --dry-run: resolved config without _extra, SKU resolved, command quoted"
	aj run -t pretrain -n 2 --amlt --dry-run python train.py "a b" "it's"
	expect_rc 0
	expect_out_lacks "_extra"
	expect_out_lacks "notes"
	expect_out "2xG8"
	expect_out_lacks "2-4"
	expect_out "- nvidia-smi"
	# The line 'python' 'train.py' 'a b' 'it'\''s' as a YAML single-quoted
	# scalar, in which every ' is doubled.
	expect_out "$(cat <<'EOF'
- '''python'' ''train.py'' ''a b'' ''it''\''''s'''
EOF
)"

	case_ "--amlt: '\$' in the user command is doubled for amlt's own expansion"
	aj run -t volcano --amlt --dry-run echo '$HOME' 'a$$b'
	expect_rc 0
	expect_out "$(cat <<'EOF'
- '''echo'' ''$$HOME'' ''a$$$$b'''
EOF
)"

	case_ "--amlt without amlt on PATH"
	mkdir -p "$tmp/emptybin"
	PATH=$tmp/emptybin aj run -t volcano --amlt python train.py
	expect_rc 1
	expect_err "amlt is not on PATH"

	case_ "--amlt hands a temporary file to amlt run, then removes it"
	mkdir -p "$tmp/bin"
	cat >"$tmp/bin/amlt" <<EOF
#!/bin/sh
printf '%s\n' "\$@" > "$tmp/amlt-args"
cp "\$2" "$tmp/amlt-config"
EOF
	chmod +x "$tmp/bin/amlt"
	PATH=$tmp/bin:$PATH TMPDIR=$tmp aj run -t volcano --name am --amlt python train.py
	expect_rc 0
	checks=$((checks + 1))
	if [ "$(sed -n 1p "$tmp/amlt-args")" != run ] ||
	   [ "$(sed -n 3p "$tmp/amlt-args")" != am ]; then
		fail "amlt got: $(tr '\n' ' ' <"$tmp/amlt-args")"
	fi
	checks=$((checks + 1))
	grep -qF -- "- '''python'' ''train.py'''" "$tmp/amlt-config" ||
		fail "amlt config lacks the command"
	checks=$((checks + 1))
	[ ! -e "$(sed -n 2p "$tmp/amlt-args")" ] || fail "temporary file left behind"

	case_ "a failing amlt is a failure"
	printf '#!/bin/sh\nexit 3\n' >"$tmp/bin/amlt"
	PATH=$tmp/bin:$PATH TMPDIR=$tmp aj run -t volcano --amlt python train.py
	expect_rc 1
	expect_err "amlt run failed (exit status 3)"
	checks=$((checks + 1))
	! ls "$tmp"/aj-amlt-* >/dev/null 2>&1 || fail "temporary file left behind"
}

group_render() {
	export AJ_HOME=$EXAMPLES
	local code=$tmp/code deep digest i

	# The code digest: render reads the tree only with --digest, run
	# --dry-run always (what it prints is applied later). A path longer than
	# the archive's limit (4095 bytes) makes any archive of this tree fail,
	# so a render that succeeds read none of it.
	mkdir -p "$code"
	printf 'print("train")\n' >"$code/train.py"
	deep=$code
	for i in $(seq 1 22); do deep=$deep/$(printf 'd%.0s' $(seq 1 190)); done
	mkdir -p "$deep" && : >"$deep/f"
	pushd "$code" >/dev/null || exit 1
	case_ "render: code that would ship shows the placeholder, the tree is not read"
	aj render -t volcano --name demo -o json -- python train.py
	expect_rc 0
	expect_err_empty
	expect_out '.aj-code/<not computed: use --digest>'
	case_ "run --dry-run archives the tree for the digest, as a submission does"
	aj run -t volcano --name demo --dry-run -o json -- python train.py
	expect_rc 1
	expect_err "path too long"
	expect_out_empty
	case_ "render --digest archives the tree"
	aj render -t volcano --name demo --digest -o json -- python train.py
	expect_rc 1
	expect_err "path too long"
	rm -rf "$code/$(printf 'd%.0s' $(seq 1 190))"
	case_ "render --digest: the digest of the archive aj code stats describes"
	aj code stats -t volcano
	expect_rc 0
	digest=$(awk '/sha256/ {print $NF}' "$tmp/out")
	checks=$((checks + 1))
	[[ $digest =~ ^[0-9a-f]{64}$ ]] || fail "code stats printed no SHA-256"
	aj render -t volcano --name demo --digest -o json -- python train.py
	expect_rc 0
	expect_out ".aj-code/$digest"
	expect_out_lacks "not computed"
	case_ "run --dry-run: the same digest in the AjJob"
	aj run -t volcano --name demo --dry-run -o json -- python train.py
	expect_rc 0
	expect_err_empty
	json "d['spec']['code']['digest'] == '$digest'"
	case_ "run --dry-run --digest: accepted, the same digest"
	aj run -t volcano --name demo --dry-run --digest -o json -- python train.py
	expect_rc 0
	json "d['spec']['code']['digest'] == '$digest'"
	case_ "run --dry-run on a terminal: the progress line on stderr, the AjJob alone on stdout"
	head -c 40000000 /dev/urandom >"$code/big.bin"
	script -qec "AJ_HOME='$AJ_HOME' '$AJ' run -t volcano --name demo --dry-run -o json -- python train.py >'$tmp/tty.json'" \
		"$tmp/tty.log" >/dev/null
	rc=$?
	expect_rc 0
	checks=$((checks + 1))
	grep -qaE $'\raj: archiving the code( [0-9]+ files,)? [0-9.]+ MiB, [0-9.]+ MiB/s' "$tmp/tty.log" ||
		fail "no progress line on the terminal: $(tr '\r' '|' <"$tmp/tty.log" | head -c 300)"
	checks=$((checks + 1))
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["spec"]["code"]["digest"]) == 64' \
		"$tmp/tty.json" || fail "stdout is not the AjJob alone"
	rm -f "$code/big.bin"
	case_ "--digest is for render and run only"
	aj template show --digest volcano
	expect_rc 2
	expect_err "unknown option '--digest'"
	popd >/dev/null || exit 1

	case_ "volcano: one Job, shape from the template"
	aj render -t volcano --name demo -o json -- "${hostile[@]}"
	expect_rc 0
	expect_err_empty
	json "d['apiVersion'] == 'batch.volcano.sh/v1alpha1'" \
	     "d['kind'] == 'Job'" \
	     "d['metadata']['name'] == 'demo'" \
	     "d['metadata']['namespace'] == 'training'" \
	     "d['spec']['queue'] == 'default'" \
	     "d['spec']['minAvailable'] == 2" \
	     "sum(t['replicas'] for t in d['spec']['tasks']) == 2" \
	     "all(t['template']['spec']['containers'][0]['image'] == 'nvcr.io/nvidia/pytorch:24.05-py3' for t in d['spec']['tasks'])" \
	     "all(t['template']['spec']['containers'][0]['resources']['limits']['nvidia.com/gpu'] == '8' for t in d['spec']['tasks'])"
	# the arguments travel after the script as argv items, every $ doubled for the kubelet
	json "all(t['template']['spec']['containers'][0]['command'][3:] == ['aj', 'python', 'train.py', 'a b', '\$\$(touch /tmp/aj-pwned)', \"'\", '\"', '', 'line1\\nline2', '--lr=3e-4', '-n', '5', '*', '\\\\', 'é'] for t in d['spec']['tasks'])" \
	     "all(t['template']['spec']['containers'][0]['command'][2].endswith('\\n\"\$\$@\"\\n') for t in d['spec']['tasks'])"

	case_ "volcano -n 4: four replicas"
	aj render -t volcano -n 4 --name demo -o json python train.py
	expect_rc 0
	json "d['spec']['minAvailable'] == 4" \
	     "sum(t['replicas'] for t in d['spec']['tasks']) == 4"

	case_ "volcano YAML by default"
	aj render -t volcano --name demo python train.py
	expect_rc 0
	expect_out "apiVersion: batch.volcano.sh/v1alpha1"
	expect_out "kind: Job"

	case_ "volcano CPU: no GPU request"
	aj render -t volcano-cpu -p 1 --name cpu -o json python prep.py
	expect_rc 0
	json "all('nvidia.com/gpu' not in t['template']['spec']['containers'][0]['resources'].get('limits', {}) for t in d['spec']['tasks'])"

	case_ "heterogeneous: one task per role"
	aj render -t heterogeneous --name h -o json python train.py
	expect_rc 0
	json "sorted(t['name'] for t in d['spec']['tasks']) == ['a100-worker', 'h100-worker', 'master']" \
	     "sum(t['replicas'] for t in d['spec']['tasks']) == 7"

	case_ "nested: scratch emptyDir and SYS_ADMIN"
	aj render -t nested --name n -o json python build.py
	expect_rc 0
	json "any(v.get('emptyDir', {}).get('sizeLimit') == '200Gi' for t in d['spec']['tasks'] for v in t['template']['spec'].get('volumes', []))" \
	     "all('SYS_ADMIN' in t['template']['spec']['containers'][0]['securityContext']['capabilities']['add'] for t in d['spec']['tasks'])"

	case_ "aml: the REST body"
	aj render -t aml --name a -o json python train.py
	expect_rc 0
	json "d['properties']['jobType'] == 'Command'" \
	     "d['properties']['computeId'].endswith('gpu-a100-cluster')" \
	     "d['properties']['resources']['instanceCount'] == 1"

	case_ "sing: the REST body with AISuperComputer"
	aj render -t sing -n 2 --name s -o json python train.py
	expect_rc 0
	json "d['properties']['jobType'] == 'Command'" \
	     "d['properties']['resources']['instanceCount'] == 2" \
	     "'AISuperComputer' in d['properties']['resources']['properties']"

	case_ "--jobspec: the typed spec"
	aj render -t volcano -n 3 -p 4 --ppn 2 --jobspec -o json python train.py
	expect_rc 0
	json "d['service'] == 'volcano'" \
	     "d['nodes'] == 3" "d['processes'] == 4" "d['processes_per_node'] == 2" \
	     "d['sku'] == '3xG4'" \
	     "len(d['tasks']) == 1" \
	     "d['tasks'][0]['name'] == 'train'" "d['tasks'][0]['replicas'] == 3" \
	     "d['tasks'][0]['processes_per_node'] == 2" \
	     "d['tasks'][0]['command'] == ['python', 'train.py']" \
	     "d['command'] == ['python', 'train.py']" \
	     "d['extra'] is None"

	case_ "--jobspec: SKU range mapping and extra"
	aj render -t pretrain -n 8 --jobspec -o json
	expect_rc 0
	json "d['sku'] == '8xG8-NvLink'" "d['extra'] == {'notes': 'pretraining runs, one per data mix'}"

	case_ "--jobspec: SKU mapping with no matching range"
	aj render -t pretrain -n 6 --jobspec
	expect_rc 1
	expect_err "config.jobs[0].sku"

	case_ "--jobspec: heterogeneous tasks, command inherited or replaced"
	aj render -t heterogeneous --jobspec -o json python train.py
	expect_rc 0
	json "d['heterogeneous'] is True" \
	     "[t['name'] for t in d['tasks']] == ['master', 'a100-worker', 'h100-worker']" \
	     "d['tasks'][1]['command'] == ['python', 'train.py']" \
	     "d['tasks'][2]['command'] == ['python h100_train.py']"

	case_ "--amlt prints the amlt config"
	aj render -t aml --amlt python train.py
	expect_rc 0
	expect_out "sku: G1"
	expect_out_lacks "_extra"
}

# The controller resolves the AjJob's bundle on its own; what it builds must
# be what `aj render` printed for the same command line.
group_bundle() {
	local t want
	export AJ_HOME=$EXAMPLES

	# --digest on both sides: the controller builds from the digest the
	# AjJob carries, which must be the one render showed for this tree.
	mkdir -p "$tmp/code" && printf 'print("train")\n' >"$tmp/code/train.py"
	cd "$tmp/code" || exit 1

	while read -r t; do
		# shellcheck disable=SC2086
		set -- $t
		case_ "bundle round trip: $*"
		aj run --name same --dry-run --digest -o json "$@" -- python train.py "a b" '$HOME'
		expect_rc 0
		cp "$tmp/out" "$tmp/ajjob.json"
		aj render --name same --digest -o json "$@" -- python train.py "a b" '$HOME'
		expect_rc 0
		want=$tmp/want.json
		cp "$tmp/out" "$want"
		last_cmd=("$BUNDLE_CHECK" "$tmp/ajjob.json")
		"$BUNDLE_CHECK" "$tmp/ajjob.json" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		expect_rc 0
		json "d == __import__('json').load(open('$want'))"
	done <<'EOF'
-t volcano
-t volcano -n 3 -p 4 --ppn 2 --namespace research
-t pretrain -n 8
-t nested
-t volcano-cpu -p 2
-t heterogeneous
-t aml -n 2
-t sing -n 2
EOF
}

# aj place offline: what it refuses before it reads any cluster (the
# ranking itself is checked against the controller's in integration.placement).
group_place() {
	export AJ_HOME=$EXAMPLES

	case_ "aj --help lists aj place"
	aj --help
	expect_rc 0
	expect_out "aj place "

	case_ "aj place --help"
	aj place --help
	expect_rc 0
	expect_out "usage: aj place -t NAME"
	for o in --template --nodes --processes --ppn --namespace --context --kubeconfig --output; do
		expect_out "$o"
	done
	expect_err_empty

	case_ "aj place needs a template"
	aj place python train.py
	expect_rc 2
	expect_err "aj place: no template: use -t NAME"
	expect_out_empty

	for bad in --dry-run "--name any-1" "--ttl 5m" --amlt "-o wide" --all-namespaces; do
		case_ "aj place refuses $bad"
		# shellcheck disable=SC2086
		aj place -t anywhere $bad python train.py
		expect_rc 2
		expect_err "aj place: "
		expect_out_empty
	done

	case_ "aj place: a bad -n is a usage error"
	aj place -t anywhere -n zero python train.py
	expect_rc 2
	expect_err "aj place: "

	case_ "aj place: a bad --namespace is a usage error"
	aj place -t anywhere --namespace Not_A_Namespace python train.py
	expect_rc 2
	expect_err "--namespace: 'Not_A_Namespace' is not a valid namespace"

	# no kubeconfig at all: the template is refused before any cluster is looked for
	case_ "aj place: a template that declares no placement"
	KUBECONFIG=$tmp/no-such-kubeconfig aj place -t volcano python train.py
	expect_rc 1
	expect_err "aj: template/volcano declares no placement: aj place ranks a placement leaf's candidates"
	expect_err_lines_located
	expect_out_empty

	case_ "aj place: a template that does not exist"
	KUBECONFIG=$tmp/no-such-kubeconfig aj place -t nowhere python train.py
	expect_rc 1
	expect_err "template/nowhere"
	expect_out_empty

	case_ "aj place: a placement leaf needs a kubeconfig"
	KUBECONFIG=$tmp/no-such-kubeconfig aj place -t anywhere python train.py
	expect_rc 1
	expect_err "KUBECONFIG=$tmp/no-such-kubeconfig: none of these files exists"
	expect_out_empty

	# a server that is not there: aj list's error, no table
	cat >"$tmp/unreachable" <<'KC'
apiVersion: v1
kind: Config
clusters:
- name: gone
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: not-a-secret}
contexts:
- name: gpu-westus3
  context: {cluster: gone, user: u, namespace: training}
current-context: gpu-westus3
KC
	case_ "aj place: a cluster that cannot be reached"
	KUBECONFIG=$tmp/unreachable aj place -t anywhere python train.py
	expect_rc 1
	expect_err "aj: list ajjobs.aj.dev in namespace training: cannot reach the API server at https://127.0.0.1:1"
	expect_out_empty
	KUBECONFIG=$tmp/unreachable aj list
	expect_err "cannot reach the API server at https://127.0.0.1:1"
}

case "$GROUP" in
usage | template | errors | run | render | bundle | place) "group_$GROUP" ;;
*)
	echo "unknown group $GROUP" >&2
	exit 2
	;;
esac

echo "$GROUP: $checks checks, $failures failed"
[ "$failures" -eq 0 ]

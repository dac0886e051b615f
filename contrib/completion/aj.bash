# bash completion for aj (and kubectl-aj).
# Installed as <prefix>/share/bash-completion/completions/aj; or source it.
# Completes commands, options, option values (template names from
# $AJ_HOME/template or .azure_jobs/template, output formats, kubeconfig
# contexts, phases) and AjJob names for status, cancel, logs and delete (from `aj list`).

_aj_templates() {
  local home=${AJ_HOME:-.azure_jobs} f
  [[ -d $home/template ]] || return 0
  for f in "$home"/template/*.yaml "$home"/template/*.yml; do
    [[ -f $f ]] || continue
    f=${f##*/}
    printf '%s\n' "${f%.y*ml}"
  done
}

# _aj_cluster_args WORDS...: the --namespace/--context/--kubeconfig/-A given so
# far, one word a line, for the `aj list` that finds AjJob names.
_aj_cluster_args() {
  local a=("$@") i
  for ((i = 0; i < ${#a[@]}; i++)); do
    case ${a[i]} in
      --namespace|--context|--kubeconfig) printf '%s\n%s\n' "${a[i]}" "${a[i+1]:-}"; i=$((i + 1)) ;;
      -A|--all-namespaces) printf '%s\n' "${a[i]}" ;;
    esac
  done
}

_aj() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  local cmd="" sub="" i w opts="" args=""
  COMPREPLY=()
  _aj_files=0   # set when the answer is file names (read by kubectl_complete-aj)

  # The command (and subcommand) typed so far; stop at the user command of run/render/place.
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if [[ -z $cmd ]]; then
      [[ $w == -* ]] || cmd=$w
    elif [[ ($cmd == template || $cmd == code || $cmd == quota || $cmd == sku || $cmd == image) && -z $sub ]]; then
      sub=$w
    fi
  done

  # Values of options that take one.
  case $prev in
    -t|--template)
      mapfile -t COMPREPLY < <(compgen -W "$(_aj_templates)" -- "$cur"); return 0 ;;
    -o|--output)
      local formats="yaml json"
      [[ $cmd == list ]] && formats="wide yaml json"
      mapfile -t COMPREPLY < <(compgen -W "$formats" -- "$cur"); return 0 ;;
    --context)
      command -v kubectl >/dev/null 2>&1 &&
        mapfile -t COMPREPLY < <(compgen -W "$(kubectl config get-contexts -o name 2>/dev/null)" -- "$cur")
      return 0 ;;
    --namespace)
      command -v kubectl >/dev/null 2>&1 &&
        mapfile -t COMPREPLY < <(compgen -W "$(kubectl get namespaces -o name 2>/dev/null | sed 's|^namespace/||')" -- "$cur")
      return 0 ;;
    --kubeconfig)
      _aj_files=1; mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return 0 ;;
    --phase)
      mapfile -t COMPREPLY < <(compgen -W "Pending Submitted Running Succeeded Failed Cancelled Cancelling" -- "$cur"); return 0 ;;
    -n|--nodes|--ppn|--name|--task|--rank|--tail|--since|--ttl|-l|--selector)
      return 0 ;;
    -p|--processes)
      [[ $cmd == logs ]] || return 0 ;;
  esac

  local cluster="--namespace --context --kubeconfig"
  case $cmd in
    "")
      mapfile -t COMPREPLY < <(compgen -W "run render place list status cancel logs delete template code quota sku image --version --help" -- "$cur")
      return 0 ;;
    run)
      opts="-t --template -n --nodes -p --processes --ppn --name -o --output -d --dry-run --digest -w --wait -f --follow -q --quiet --ttl --amlt $cluster --help"
      args=command ;;
    render)
      opts="-t --template -n --nodes -p --processes --ppn --namespace --name -o --output --digest --jobspec --amlt --help"
      args=command ;;
    place)
      opts="-t --template -n --nodes -p --processes --ppn -o --output $cluster --help"
      args=command ;;
    list)
      opts="-A --all-namespaces --phase -l --selector -w --watch -o --output $cluster --help" ;;
    status)
      opts="-o --output -w --wait $cluster --help"; args=job ;;
    cancel)
      opts="$cluster --help"; args=job ;;
    logs)
      opts="-f --follow --task --rank --tail --since --timestamps -p --previous $cluster --help"; args=job ;;
    delete)
      opts="--all --phase --wait --no-wait $cluster --help"; args=job ;;
    template)
      case $sub in
        "")
          if [[ $cur == -* ]]; then COMPREPLY=(--help)
          else mapfile -t COMPREPLY < <(compgen -W "list show validate" -- "$cur"); fi
          return 0 ;;
        show) opts="-o --output --help"; args=template ;;
        validate) opts="--help"; args=template ;;
        list) opts="--help" ;;
      esac ;;
    code)
      case $sub in
        "") mapfile -t COMPREPLY < <(compgen -W "stats upload" -- "$cur"); return 0 ;;
        stats) opts="-t --template --help" ;;
        upload) opts="-t --template --namespace -q --quiet --help" ;;
      esac ;;
    quota|sku|image)
      case $sub in
        "") mapfile -t COMPREPLY < <(compgen -W "list" -- "$cur"); return 0 ;;
        list) opts="-o --output --help"; [[ $cmd == quota ]] && opts="--full $opts" ;;
      esac ;;
    *) return 0 ;;
  esac

  # run/render/place: once the user command has started, complete its files.
  if [[ $args == command ]]; then
    local seen=0 j
    for ((j = 2; j < COMP_CWORD; j++)); do
      w=${COMP_WORDS[j]}
      case ${COMP_WORDS[j-1]} in
        -t|--template|-n|--nodes|-p|--processes|--ppn|--namespace|--name|-o|--output|--context|--kubeconfig) continue ;;
      esac
      if [[ $w == -- || $w != -* ]]; then seen=1; break; fi
    done
    if ((seen)); then
      _aj_files=1; mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return 0
    fi
  fi
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur"); return 0
  fi
  case $args in
    template) mapfile -t COMPREPLY < <(compgen -W "$(_aj_templates)" -- "$cur") ;;
    job)
      local names cargs
      mapfile -t cargs < <(_aj_cluster_args "${COMP_WORDS[@]:1:COMP_CWORD-1}")
      # With -A the first column is the namespace.
      local col=1
      [[ " ${cargs[*]} " == *" -A "* || " ${cargs[*]} " == *" --all-namespaces "* ]] && col=2
      names=$("${COMP_WORDS[0]}" list "${cargs[@]}" 2>/dev/null | awk -v c="$col" 'NR > 1 { print $c }')
      mapfile -t COMPREPLY < <(compgen -W "$names" -- "$cur") ;;
    *) mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur") ;;
  esac
  return 0
}
complete -F _aj aj kubectl-aj

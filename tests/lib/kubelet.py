"""What the kubelet does to a container's strings before anything runs.

Kubernetes expands $(VAR) references in a container's command, args and
env[].value (k8s.io/kubernetes third_party/forked/golang/expansion): $$ is
one $, $(NAME) becomes the value of a variable defined earlier in env (left
as written when undefined), any other $ stays. This is a port of that
function, so tests can see a pod's argv and environment as the process gets
them.
"""


def expand(text, env):
    out = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c != "$" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":                      # escaped operator
            out.append("$")
            i += 2
        elif nxt == "(":
            close = text.find(")", i + 2)
            if close < 0:                   # incomplete reference: kept
                out.append("$(")
                i += 2
            else:
                name = text[i + 2:close]
                out.append(env[name] if name in env else "$(" + name + ")")
                i = close + 1
        else:                               # a lone $: kept with what follows
            out.append("$" + nxt)
            i += 2
    return "".join(out)


def container_view(container):
    """(argv, env) of a container as its process receives them."""
    env = {}
    for e in container.get("env", []):
        env[e["name"]] = expand(e.get("value", ""), env)
    argv = [expand(a, env) for a in container.get("command", []) + container.get("args", [])]
    return argv, env

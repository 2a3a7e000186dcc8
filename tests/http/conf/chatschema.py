"""chatschema.py - t_chat_schema.sh's checks: the chat routes' requests
and answers the test saved (S['req-NAME'], S[NAME]; E['EXCHANGES'] lists
"NAME:send" or "NAME:submit" for each) against the schemas GET
/_jay/actions gives clients (S['listing']), read by jsubset.py. Each
function returns what is wrong ({} or [] when nothing is).
"""

from jsubset import violations

ROUTES = {"send": "geminiAgent.sendMessage", "submit": "geminiAgent.submitToolResults"}


def schemas(S):
    return {a["name"]: a for a in S["listing"]["actions"] if a["name"].startswith("geminiAgent.")}


def exchanges(E):
    return [tuple(x.split(":")) for x in E["EXCHANGES"].split()]


def output(S):
    return schemas(S)[ROUTES["send"]]["outputSchema"]


def answer_problems(S, E):
    return {n: v for n, _ in exchanges(E) if (v := violations(output(S), S[n]))}


def answer_extra_members(S, E):
    known = set(output(S)["properties"])
    return {n: sorted(set(S[n]) - known) for n, _ in exchanges(E) if set(S[n]) - known}


def answer_members_unseen(S, E):
    seen = set().union(*[set(S[n]) for n, _ in exchanges(E)])
    return sorted(set(output(S)["properties"]) - seen)


def answer_types_unseen(S, E):
    return sorted(set(output(S)["properties"]["type"]["enum"]) - {S[n]["type"] for n, _ in exchanges(E)})


def request_problems(S, E):
    return {n: v for n, route in exchanges(E)
            if (v := violations(schemas(S)[ROUTES[route]]["inputSchema"], S["req-" + n]))}


def request_members_unused(S, E):
    out = {}
    for route, name in ROUTES.items():
        used = set().union(*[set(S["req-" + n]) for n, r in exchanges(E) if r == route])
        unused = sorted(set(schemas(S)[name]["inputSchema"]["properties"]) - used)
        if unused:
            out[name] = unused
    return out

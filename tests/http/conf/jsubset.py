"""jsubset.py - the JSON Schema subset of .jay-action files (docs/plugins/README.md "Server
actions": src/registry/jschema.h lists it), as a test's second opinion:
violations(schema, value) is the list of what `value` breaks, each as
"<JSON pointer>: <what>" ([] when it is valid). A keyword outside the
subset is a violation too, so a schema the responder would refuse cannot
pass here. `pattern` is matched with Python's re (the files use only the
ERE that both read alike).
"""

import re

ANNOTATIONS = {"description", "title", "default", "examples", "$comment", "format"}
KEYWORDS = {"type", "properties", "required", "additionalProperties", "enum", "const",
            "items", "minItems", "maxItems", "minimum", "maximum", "minLength",
            "maxLength", "pattern", "anyOf"} | ANNOTATIONS


def type_ok(name, v):
    if name == "object":
        return isinstance(v, dict)
    if name == "array":
        return isinstance(v, list)
    if name == "string":
        return isinstance(v, str)
    if name == "boolean":
        return isinstance(v, bool)
    if name == "null":
        return v is None
    if name == "integer":
        return (isinstance(v, int) and not isinstance(v, bool)) or (
            isinstance(v, float) and v.is_integer())
    if name == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    raise ValueError("unknown type %r" % name)


def violations(schema, v, path=""):
    out = []
    for k in schema:
        if k not in KEYWORDS:
            out.append("%s: the schema uses %r, outside the subset" % (path, k))
    t = schema.get("type")
    if t is not None:
        names = t if isinstance(t, list) else [t]
        if not any(type_ok(n, v) for n in names):
            return out + ["%s: %s is not of type %s" % (path, type(v).__name__, t)]
    if "enum" in schema and v not in schema["enum"]:
        out.append("%s: %r is not one of %r" % (path, v, schema["enum"]))
    if "const" in schema and v != schema["const"]:
        out.append("%s: %r is not %r" % (path, v, schema["const"]))
    if isinstance(v, str):
        if len(v) < schema.get("minLength", 0):
            out.append("%s: shorter than %d" % (path, schema["minLength"]))
        if "maxLength" in schema and len(v) > schema["maxLength"]:
            out.append("%s: longer than %d" % (path, schema["maxLength"]))
        if "pattern" in schema and not re.search(schema["pattern"], v):
            out.append("%s: %r does not match %r" % (path, v, schema["pattern"]))
    if type_ok("number", v):
        if "minimum" in schema and v < schema["minimum"]:
            out.append("%s: below %r" % (path, schema["minimum"]))
        if "maximum" in schema and v > schema["maximum"]:
            out.append("%s: above %r" % (path, schema["maximum"]))
    if isinstance(v, list):
        if len(v) < schema.get("minItems", 0):
            out.append("%s: fewer than %d items" % (path, schema["minItems"]))
        if "maxItems" in schema and len(v) > schema["maxItems"]:
            out.append("%s: more than %d items" % (path, schema["maxItems"]))
        if "items" in schema:
            for i, item in enumerate(v):
                out += violations(schema["items"], item, "%s/%d" % (path, i))
    if isinstance(v, dict):
        props = schema.get("properties", {})
        for k in schema.get("required", []):
            if k not in v:
                out.append("%s: %r is required" % (path, k))
        extra = schema.get("additionalProperties", True)
        for k, item in v.items():
            if k in props:
                out += violations(props[k], item, "%s/%s" % (path, k))
            elif extra is False:
                out.append("%s: %r is not allowed" % (path, k))
            elif isinstance(extra, dict):
                out += violations(extra, item, "%s/%s" % (path, k))
    if "anyOf" in schema and not any(not violations(s, v, path) for s in schema["anyOf"]):
        out.append("%s: matches none of anyOf" % path)
    return out

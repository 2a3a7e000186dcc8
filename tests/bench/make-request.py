#!/usr/bin/env python3
"""Write a benchmark sendMessage body to stdout: make-request.py [SIZE].

SIZE is one of (default typical):
    small    2 turns,   5 page tools, a 1 KB page state
    typical  20 turns, 30 page tools, a 20 KB page state
    large   200 turns, 60 page tools, a 200 KB page state
The turns are exchanges about a cart, the tools of the kind tools.js
generates. Deterministic: the same bytes every run.
"""
import json
import sys

SIZES = {"small": (2, 5, 1024), "typical": (20, 30, 20 * 1024),
         "large": (200, 60, 200 * 1024)}

def history(turns=20):
    h = []
    for i in range(turns // 2):
        h.append({"role": "user", "parts": [{"text": f"Question {i}: what is in my cart, and can you change the quantity of item {i}? " * 2}]})
        h.append({"role": "model", "parts": [{"text": f"Answer {i}: your cart has several items; I changed item {i} as you asked and the total is now updated. " * 2}]})
    return h

def tools(n=30):
    out = []
    for i in range(n):
        out.append({
            "name": f"click-button-{i}",
            "description": f"Click button {i} on one of the cart rows",
            "inputSchema": {"type": "object", "properties": {"coordinate": {
                "type": "string", "enum": [f"item-{k}/button{i}" for k in range(8)]}},
                "required": ["coordinate"]},
            "category": "page-automation",
        })
    return out

def page_state(target=20 * 1024):
    items, i = [], 0
    while len(json.dumps(items)) < target - 200:
        items.append({"id": f"item-{i}", "name": f"Product number {i} with a longer name",
                      "price": 10 + i * 1.25, "quantity": 1 + i % 3,
                      "description": "A reasonably detailed product description " * 2})
        i += 1
    return {"items": items, "total": round(sum(x["price"] * x["quantity"] for x in items), 2),
            "itemCount": len(items)}

size = sys.argv[1] if len(sys.argv) > 1 else "typical"
if size not in SIZES:
    sys.exit("make-request.py: SIZE is one of %s" % ", ".join(SIZES))
turns, ntools, state = SIZES[size]
body = {"message": "Remove the USB-C Hub from my cart", "history": history(turns),
        "toolDefinitions": tools(ntools), "pageState": page_state(state)}
print(json.dumps(body, separators=(",", ":")))

#!/usr/bin/env python3
"""Write the benchmark's typical sendMessage body to stdout.

A conversation of 20 turns (10 exchanges about a cart), 30 page tools of
the kind tools.js generates (semantic tools with coordinate enums), and a
page state of about 20 KB. Deterministic: the same bytes every run.
"""
import json

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

body = {"message": "Remove the USB-C Hub from my cart", "history": history(),
        "toolDefinitions": tools(), "pageState": page_state()}
print(json.dumps(body, separators=(",", ":")))

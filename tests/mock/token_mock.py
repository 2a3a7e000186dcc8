#!/usr/bin/env python3
"""token_mock.py - a fake Google OAuth 2.0 token endpoint for the credential
tests (tests/unit/check_credentials.c).  Python 3 standard library only.

    python3 tests/mock/token_mock.py --port 0 --port-file FILE --key-file FILE

--key-file is JSON written by the test: {"n": "<hex modulus>", "e": <int>,
"kid": "<private_key_id>", "iss": "<client_email>"}, the public half of the
RSA key the test generated.  The mock VERIFIES every JWT assertion: the
RS256 signature (RSASSA-PKCS1-v1_5 with SHA-256, done with pow() since the
standard library has no RSA), the header (alg, typ, kid) and the claims
(iss, scope, aud = the URL posted to, exp - iat = 3600).

Routes:
    POST /token[/VARIANT]   the token endpoint (form-encoded body)
        grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=JWT
        grant_type=refresh_token&client_id&client_secret&refresh_token
      -> 200 {"access_token": "sa-token-N" | "au-token-N", "expires_in":
         3600, "token_type": "Bearer"}; a bad grant -> 400
         {"error": "invalid_grant", "error_description": ...}, whose
         description ECHOES the secrets it was sent, so the tests prove the
         client never quotes it.  refresh_token "revoked" is refused.
      VARIANT: "garbage" (200, not JSON), "notoken" (200 without
      access_token), "unavailable" (503 HTML), "short" (expires_in 30),
      "badtoken" (an access_token with a space), after the grant checks.
    POST /echo              200 {"headers": {lowercased name: value}}
    GET  /__mock/health     200 {"ok": true}

Stop it with SIGTERM (the test does, by PID).
"""

import argparse
import base64
import hashlib
import hmac
import http.server
import itertools
import json
import os
import sys
import time
import urllib.parse

JWT_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
SCOPE = "https://www.googleapis.com/auth/cloud-platform"
# DER of DigestInfo for SHA-256 (RFC 8017 §9.2, note 1)
SHA256_PREFIX = bytes.fromhex("3031300d060960864801650304020105000420")

counter = itertools.count(1)
KEY = {}


def b64url_decode(s):
    if "=" in s:
        raise ValueError("padding in base64url")
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def rs256_verify(n, e, signing_input, sig):
    k = (n.bit_length() + 7) // 8
    if len(sig) != k:
        return False
    m = pow(int.from_bytes(sig, "big"), e, n).to_bytes(k, "big")
    t = SHA256_PREFIX + hashlib.sha256(signing_input).digest()
    em = b"\x00\x01" + b"\xff" * (k - 3 - len(t)) + b"\x00" + t
    return hmac.compare_digest(m, em)


def check_jwt(assertion, aud):
    """None when the assertion is valid, else why not."""
    parts = assertion.split(".")
    if len(parts) != 3:
        return "not three parts"
    try:
        header = json.loads(b64url_decode(parts[0]))
        claims = json.loads(b64url_decode(parts[1]))
        sig = b64url_decode(parts[2])
    except ValueError as ex:
        return "undecodable: %s" % ex
    if header != {"alg": "RS256", "typ": "JWT", "kid": KEY["kid"]}:
        return "bad header %r" % header
    if not rs256_verify(KEY["n"], KEY["e"],
                        (parts[0] + "." + parts[1]).encode(), sig):
        return "bad signature"
    want = {"iss", "scope", "aud", "iat", "exp"}
    if set(claims) != want:
        return "claims %r, want %r" % (sorted(claims), sorted(want))
    if claims["iss"] != KEY["iss"]:
        return "iss %r" % claims["iss"]
    if claims["scope"] != SCOPE:
        return "scope %r" % claims["scope"]
    if claims["aud"] != aud:
        return "aud %r, want %r" % (claims["aud"], aud)
    if not all(isinstance(claims[k], int) for k in ("iat", "exp")):
        return "iat/exp not integers"
    if claims["exp"] - claims["iat"] != 3600:
        return "exp - iat = %d" % (claims["exp"] - claims["iat"])
    # the tests move their clock forward by up to an hour and a bit
    if abs(claims["iat"] - time.time()) > 7200:
        return "iat too far from now"
    return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("token_mock: " + (fmt % args) + "\n")

    def send(self, status, body, ctype="application/json"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/__mock/health":
            self.send(200, {"ok": True})
        else:
            self.send(404, {"error": "not_found"})

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n)
        if self.path == "/echo":
            self.send(200, {"headers": {k.lower(): v
                                        for k, v in self.headers.items()}})
            return
        path = urllib.parse.urlsplit(self.path).path
        if path != "/token" and not path.startswith("/token/"):
            self.send(404, {"error": "not_found"})
            return
        variant = path[len("/token/"):] if path != "/token" else ""
        ctype = self.headers.get("Content-Type", "")
        if ctype != "application/x-www-form-urlencoded":
            self.send(400, {"error": "invalid_request",
                            "error_description": "content type %s" % ctype})
            return
        try:
            form = urllib.parse.parse_qs(raw.decode(), keep_blank_values=True,
                                         strict_parsing=True)
        except ValueError:
            self.send(400, {"error": "invalid_request"})
            return
        form = {k: v[0] for k, v in form.items() if len(v) == 1}
        grant = form.get("grant_type")
        if grant == JWT_GRANT:
            aud = "http://%s%s" % (self.headers.get("Host"), self.path)
            why = check_jwt(form.get("assertion", ""), aud)
            if why is not None:
                self.log_message("refused the assertion: %s", why)
                self.send(400, {"error": "invalid_grant",
                                "error_description": "%s; assertion=%s"
                                % (why, form.get("assertion"))})
                return
            kind = "sa"
        elif grant == "refresh_token":
            need = ("client_id", "client_secret", "refresh_token")
            if set(form) != set(need + ("grant_type",)) or not all(
                    form[k] for k in need):
                self.send(400, {"error": "invalid_request",
                                "error_description": repr(form)})
                return
            if form["refresh_token"] == "revoked":
                self.send(400, {"error": "invalid_grant",
                                "error_description":
                                "Token has been expired or revoked: %s %s"
                                % (form["refresh_token"],
                                   form["client_secret"])})
                return
            kind = "au"
        else:
            self.send(400, {"error": "unsupported_grant_type"})
            return
        token = "%s-token-%d" % (kind, next(counter))
        if variant == "garbage":
            self.send(200, b"<html>" + token.encode() + b"</html>",
                      "text/html")
        elif variant == "notoken":
            self.send(200, {"expires_in": 3600, "token_type": "Bearer"})
        elif variant == "unavailable":
            self.send(503, b"<html>unavailable</html>", "text/html")
        elif variant == "badtoken":
            self.send(200, {"access_token": token + " x", "expires_in": 3600})
        else:
            self.send(200, {"access_token": token,
                            "expires_in": 30 if variant == "short" else 3600,
                            "token_type": "Bearer"})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--key-file", required=True)
    args = ap.parse_args()
    with open(args.key_file) as f:
        k = json.load(f)
    KEY.update(n=int(k["n"], 16), e=int(k["e"]), kid=k["kid"], iss=k["iss"])
    srv = http.server.ThreadingHTTPServer((args.host, args.port), Handler)
    srv.daemon_threads = True
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.replace(tmp, args.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()

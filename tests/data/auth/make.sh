#!/usr/bin/env bash
# Makes the test keys and certificates of tests/serve_http/auth.rs (openssl and
# python3 only). Committed as made; run again only to replace them all:
#   bash tests/data/auth/make.sh
# Test material only: these keys are public.
set -euo pipefail
cd "$(dirname "$0")"
# The access-token signing keys (an issuer's): RSA 2048 (RS256) and P-256 (ES256).
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.pem 2>/dev/null
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ec.pem 2>/dev/null
# Another RSA key, not in the JWKS: a token it signs is refused.
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out other-rsa.pem 2>/dev/null
# Their public halves as a JWKS (kid test-rsa, test-ec).
modulus=$(openssl rsa -in rsa.pem -noout -modulus 2>/dev/null | cut -d= -f2)
ecpoint=$(openssl pkey -in ec.pem -pubout -outform DER | tail -c 65 | od -An -v -tx1 | tr -d ' \n')
python3 - "$modulus" "$ecpoint" > jwks.json <<'PY'
import base64, json, sys
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
n = bytes.fromhex(sys.argv[1])
point = bytes.fromhex(sys.argv[2])
assert point[0] == 4 and len(point) == 65
keys = [
    {"kty": "RSA", "kid": "test-rsa", "use": "sig", "alg": "RS256", "n": b64(n), "e": "AQAB"},
    {"kty": "EC", "kid": "test-ec", "use": "sig", "alg": "ES256", "crv": "P-256",
     "x": b64(point[1:33]), "y": b64(point[33:])},
]
print(json.dumps({"keys": keys}, indent=2))
PY
# TLS: a test CA, and a server certificate it signs for localhost and 127.0.0.1.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca-key.pem -out ca.pem \
    -days 36500 -subj "/CN=mcp-preamble test CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server-key.pem -out server.csr \
    -subj "/CN=localhost" 2>/dev/null
printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n' > server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -out server.pem \
    -days 36500 -extfile server.ext 2>/dev/null
# A second CA and server certificate: what a renewal puts in place of the first.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca-key.pem -out ca2.pem \
    -days 36500 -subj "/CN=mcp-preamble test CA 2" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server2-key.pem -out server.csr \
    -subj "/CN=localhost" 2>/dev/null
openssl x509 -req -in server.csr -CA ca2.pem -CAkey ca-key.pem -CAcreateserial -out server2.pem \
    -days 36500 -extfile server.ext 2>/dev/null
rm -f server.csr server.ext ca.srl ca2.srl ca-key.pem

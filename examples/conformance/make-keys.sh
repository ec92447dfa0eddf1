#!/bin/sh
# Creates this example's throwaway keys in keys/ (git-ignored, never committed) and signs its
# contracts with the publisher key, so that `trust: {mode: enforce}` loads them:
#   keys/publisher.pem  P-256 contract publisher key (signs contracts/*.clad.toml -> *.sig)
#   keys/ect.pem        P-256 ECT key (the Standard profile's ES256 L2 ECTs)
# Run it once before `warden conformance --config examples/conformance/sidecar.yaml`, and again
# after changing a contract (a contract changed after signing is refused at start).
# test/conformance/full.test.ts runs these same `warden` lines in a temp copy.
set -eu
cd "$(dirname "$0")"
warden() { if [ -n "${WARDEN:-}" ]; then $WARDEN "$@"; else command warden "$@"; fi; }
warden keys generate --type p256 --out keys --name publisher
warden keys generate --type p256 --out keys --name ect
warden contract sign contracts/echo.clad.toml --key keys/publisher.pem --domain tools.example

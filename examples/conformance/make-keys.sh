#!/bin/sh
# Creates this example's throwaway keys in keys/ (git-ignored, never committed) and signs its
# contracts with the publisher key, so that `trust: {mode: enforce}` loads them:
#   keys/publisher.pem  P-256 contract publisher key (signs contracts/*.clad.toml -> *.sig)
#   keys/ect.pem        P-256 ECT key (the Standard profile's ES256 L2 ECTs)
# Run it once before `warden conformance --config examples/conformance/sidecar.yaml`, and again
# after changing a contract (a contract changed after signing is refused at start).
# Safe to re-run: keys that already exist are kept (and said so), the contracts are signed
# again with them. `sh make-keys.sh --force` replaces both keys with new ones first.
# `warden` on PATH runs it; WARDEN="node /path/to/bin/warden.js" runs a local build instead.
# test/conformance/make-keys.test.ts runs this script; test/conformance/full.test.ts runs its
# `warden` lines in a temp copy.
set -eu
cd "$(dirname "$0")"
force=0
case "${1:-}" in
  --force) force=1 ;;
  "") ;;
  *) echo "usage: sh make-keys.sh [--force]" >&2; exit 2 ;;
esac
warden() { if [ -n "${WARDEN:-}" ]; then $WARDEN "$@"; else command warden "$@"; fi; }
# key NAME: keeps keys/NAME.pem unless --force; otherwise removes its four files and makes it.
key() {
  if [ -f "keys/$1.pem" ] && [ "$force" -eq 0 ]; then
    echo "keys/$1.pem exists: kept (--force makes a new one)"
    return 0
  fi
  rm -f "keys/$1.pem" "keys/$1.jwk.json" "keys/$1.pub.pem" "keys/$1.pub.jwk.json"
  warden keys generate --type p256 --out keys --name "$1"
}
key publisher
key ect
warden contract sign contracts/echo.clad.toml --key keys/publisher.pem --domain tools.example

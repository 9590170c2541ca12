#!/usr/bin/env bash
# check.sh GOWINIO_DIR GOLANGETW_DIR TEKERT_DIR: builds and runs three Go programs written
# for Windows' ETW against etwemu, each with only its import lines changed, and checks
# that the events they trace or read appear as golang-etw's event JSON:
#
#   go-winio-sample   github.com/microsoft/go-winio     pkg/etw/sample/main_windows.go
#                                                       (pkg/etw/sample/sample.go before 2022)
#   golang-etw-readme github.com/0xrawsec/golang-etw    the first Go code block of README.md
#   tekert-simple     github.com/tekert/golang-etw      examples/simple/simple.go
#
# Each DIR is a work tree of that repository (its files are read as they are) or its git
# directory (the files are read from the commit HEAD). Each program is copied into a
# temporary module whose go.mod replaces github.com/etwemu/etwemu with this checkout, and
# these lines alone are changed:
#
#   "github.com/Microsoft/go-winio/pkg/etw"  -> "github.com/etwemu/etwemu/etw"
#   "github.com/Microsoft/go-winio/pkg/guid" -> "github.com/etwemu/etwemu/guid"
#   "github.com/0xrawsec/golang-etw/etw"     -> etw "github.com/etwemu/etwemu/consumer"
#   "github.com/tekert/golang-etw/etw"       -> etw "github.com/etwemu/etwemu/consumer"
#   //go:build windows, // +build windows    -> dropped
#
# Files of etwemu's own are added beside them, never edits: for the golang-etw programs
# provider.go.txt, a provider in the same process writing the events that Windows' kernel
# would write under Microsoft-Windows-Kernel-File; for go-winio's sample, which writes
# events and reads none, observer_test.go.txt, a session that enables the sample's
# providers before its main runs (as a tool would on Windows) and prints what it received
# once main returns. go-winio's sample is run twice, as built (enter pressed on stdin)
# and through the observer. The golang-etw programs run for their own five seconds; they
# stop their consumer before their session, so every event they print was delivered by
# the session's one-second flushes within that window. events.go.txt counts the events
# and refuses a line that is not golang-etw's event JSON. The three .go.txt files must be
# as gofmt prints them.
#
# Output: one line per program (its name, the outside commit, "builds: yes/no",
# "events: N", whether the changes are import lines only), then that program's changed
# lines as diff prints them, and on a failure the reason. It exits 1 if any program fails
# to build, run, print events or keep to import-line changes.
#
# Not part of `go test`: the programs are outside code (go-winio is MIT, the golang-etw
# forks GPL-3.0), run from their sources, never copied into this repository. Their own
# imports beyond the standard library and the etw packages, if any, come from the Go
# module proxy and are named on the program's line. Each run is bounded by 120 seconds
# and 16 MiB of output.
set -euo pipefail

if [ $# -ne 3 ]; then
	echo "usage: $0 GOWINIO_DIR GOLANGETW_DIR TEKERT_DIR (each a work tree or a git directory of github.com/microsoft/go-winio, github.com/0xrawsec/golang-etw, github.com/tekert/golang-etw)" >&2
	exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tools/ports
limit=120
maxout=$((16 << 20))
export GOWORK=off GOFLAGS=-mod=mod
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# show DIR PATH: the file PATH of the checkout DIR, from its work tree or its HEAD.
show() {
	if [ -f "$1/$2" ]; then
		cat "$1/$2"
	elif git --git-dir="$1" rev-parse -q --verify HEAD >/dev/null 2>&1; then
		git --git-dir="$1" show "HEAD:$2"
	else
		echo "$1: no $2 in a work tree or at a git directory's HEAD" >&2
		return 1
	fi
}

# commit DIR PATH: the checkout's commit, "+modified" when the work tree changed PATH.
commit() {
	if [ -e "$1/.git" ]; then
		c=$(git -C "$1" rev-parse --short=12 HEAD)
		if [ -n "$(git -C "$1" status --porcelain -- "$2")" ]; then
			c="$c+modified"
		fi
		echo "$c"
	elif git --git-dir="$1" rev-parse -q --verify HEAD >/dev/null 2>&1; then
		git --git-dir="$1" rev-parse --short=12 HEAD
	else
		echo "unknown"
	fi
}

# firstgo: the first ```go block of a Markdown file on stdin.
firstgo() {
	awk '/^```go[[:space:]]*$/ && !done { inblock = 1; next } inblock && /^```/ { inblock = 0; done = 1; next } inblock { print }'
}

# An import spec alone on its line, optionally after "import" and with a name.
spec='^[[:space:]]*(import[[:space:]]+)?([A-Za-z_][A-Za-z0-9_]*[[:space:]]+)?'

# rewrite KIND: the program on stdin with its import lines changed for KIND.
rewrite() {
	local e=(-e '/^\/\/go:build windows$/d' -e '/^\/\/ \+build windows$/d')
	case $1 in
	winio)
		e+=(-e "s#($spec)\"github.com/Microsoft/go-winio/pkg/etw\"\$#\\1\"github.com/etwemu/etwemu/etw\"#")
		e+=(-e "s#($spec)\"github.com/Microsoft/go-winio/pkg/guid\"\$#\\1\"github.com/etwemu/etwemu/guid\"#")
		;;
	golangetw)
		# a named import keeps its name; an unnamed one is named etw, the package's name
		e+=(-e "s#^([[:space:]]*(import[[:space:]]+)?)\"github.com/(0xrawsec|tekert)/golang-etw/etw\"\$#\\1etw \"github.com/etwemu/etwemu/consumer\"#")
		e+=(-e "s#($spec)\"github.com/(0xrawsec|tekert)/golang-etw/etw\"\$#\\1\"github.com/etwemu/etwemu/consumer\"#")
		;;
	esac
	sed -E "${e[@]}"
}

# importsonly DIFF: whether every line diff changed is a dropped build constraint or an
# import of the outside package made an import of etwemu's.
importsonly() {
	local old="$spec\"github.com/(Microsoft/go-winio/pkg/(etw|guid)|(0xrawsec|tekert)/golang-etw/etw)\"\$"
	local new="$spec\"github.com/etwemu/etwemu/(etw|guid|consumer)\"\$"
	local line
	while IFS= read -r line; do
		case $line in
		'< //go:build windows' | '< // +build windows') ;;
		'< '*) [[ ${line#< } =~ $old ]] || return 1 ;;
		'> '*) [[ ${line#> } =~ $new ]] || return 1 ;;
		esac
	done <"$1"
}

# run OUT IN BIN [ARGS...]: runs BIN bounded in time and output, stdin from IN.
run() {
	local out=$1 in=$2
	shift 2
	timeout "$limit" "$@" <"$in" 2>"$out.stderr" | head -c "$maxout" >"$out"
}

# etwemu's own files here are Go that no CI step formats: hold them to gofmt.
for f in "$here"/*.go.txt; do
	if ! gofmt <"$f" | cmp -s - "$f"; then
		echo "$f: not as gofmt prints it" >&2
		exit 1
	fi
done

# The event counter, a module of its own (standard library only).
mkdir -p "$tmp/events"
cp "$here/events.go.txt" "$tmp/events/main.go"
printf 'module etwemu.test/ports/events\n\ngo 1.25.0\n' >"$tmp/events/go.mod"
(cd "$tmp/events" && go build -o "$tmp/events.bin" .)
godirective=$(awk '$1 == "go" { print $2; exit }' "$root/go.mod")
ourmods=$(cd "$root" && go list -m -f '{{.Path}}' all)

failed=0
# port NAME KIND DIR PATH: checks one program; PATH is a Go file, or README.md.
port() {
	local name=$1 kind=$2 dir=$3 path=$4
	local w=$tmp/$name mod=$tmp/$name/mod builds=no events=0 changes="nothing read" why=""
	mkdir -p "$mod"
	local c
	c=$(commit "$dir" "$path")
	if ! show "$dir" "$path" >"$w/orig" 2>"$w/why"; then
		why=$(cat "$w/why")
	fi
	if [ -z "$why" ] && [ "$path" = README.md ]; then
		firstgo <"$w/orig" >"$w/orig.go"
		mv "$w/orig.go" "$w/orig"
		[ -s "$w/orig" ] || why="$path has no \`\`\`go block"
	fi
	if [ -z "$why" ]; then
		rewrite "$kind" <"$w/orig" >"$mod/main.go"
		diff "$w/orig" "$mod/main.go" >"$w/diff" || true
		changes="import lines only"
		importsonly "$w/diff" || changes="NOT import lines only"
		if [ "$kind" = golangetw ]; then
			cp "$here/provider.go.txt" "$mod/etwemu_provider.go"
		else
			cp "$here/observer_test.go.txt" "$mod/etwemu_observer_test.go"
		fi
		printf 'module etwemu.test/ports/%s\n\ngo %s\n\nrequire github.com/etwemu/etwemu v0.0.0\n\nreplace github.com/etwemu/etwemu => %s\n' \
			"$name" "$godirective" "$root" >"$mod/go.mod"
		cp "$root/go.sum" "$mod/go.sum"
		if (cd "$mod" && go mod tidy && go build -o "$w/bin" .) >"$w/build" 2>&1; then
			builds=yes
		else
			why="go mod tidy or go build failed: $(tail -n 5 "$w/build")"
		fi
	fi
	local others=""
	if [ "$builds" = yes ]; then
		others=$(cd "$mod" && go list -m -f '{{.Path}}' all | grep -vxF -e "etwemu.test/ports/$name" -e "$ourmods" || true)
		local providers fields=() want=0 out
		if [ "$kind" = golangetw ]; then
			: >"$w/in"
			out=$w/out
			providers=Microsoft-Windows-Kernel-File
			fields=(-field 'FileName=C:\Windows\Temp\etwemu.tmp' -field CreateOptions=16777312)
			run "$out" "$w/in" "$w/bin" || why="the program failed (status $?): $(tail -n 5 "$out.stderr")"
		else
			printf '\n' >"$w/in"
			out=$w/observed
			providers=TestProvider,TestProviderWithGroup
			fields=(-field TestField=Foo -field TestField2=Bar)
			want=2
			if ! run "$w/out" "$w/in" "$w/bin"; then
				why="the program failed: $(tail -n 5 "$w/out.stderr")"
			elif ! grep -q '^Press enter to log events$' "$w/out"; then
				why="the program did not ask for enter: $(head -c 300 "$w/out")"
			elif ! (cd "$mod" && go test -c -o "$w/observer" .) >"$w/build" 2>&1; then
				why="the observer did not build: $(tail -n 5 "$w/build")"
			else
				run "$out" "$w/in" "$w/observer" || why="the program, observed, failed (status $?): $(tail -n 5 "$out.stderr")"
			fi
		fi
		if [ -z "$why" ]; then
			if ! events=$("$tmp/events.bin" -providers "$providers" -want "$want" "${fields[@]}" <"$out" 2>"$w/events"); then
				why=$(head -c 600 "$w/events")
			fi
		fi
	fi
	printf '%-18s %-21s builds: %-3s  events: %-4s changed: %s%s\n' "$name" "$c" "$builds" "$events" "$changes" \
		"${others:+; modules from the proxy: $(echo "$others" | tr '\n' ' ')}"
	[ -f "$w/diff" ] && sed 's/^/    /' "$w/diff"
	if [ "$changes" = "NOT import lines only" ]; then
		why="a line other than an import or a build constraint changed${why:+$'\n'$why}"
	fi
	if [ -n "$why" ]; then
		echo "$why" | sed 's/^/    FAIL: /'
		failed=1
	fi
}

# firstof DIR PATH...: the first PATH that DIR holds, else the last.
firstof() {
	local dir=$1 p
	shift
	for p in "$@"; do
		if show "$dir" "$p" >/dev/null 2>&1; then
			echo "$p"
			return
		fi
	done
	echo "${@: -1}"
}

port go-winio-sample winio "$1" "$(firstof "$1" pkg/etw/sample/main_windows.go pkg/etw/sample/sample.go)"
port golang-etw-readme golangetw "$2" README.md
port tekert-simple golangetw "$3" examples/simple/simple.go
exit "$failed"

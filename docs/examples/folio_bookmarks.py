#!/usr/bin/env python3
"""Bookmarks through Folio's control socket, without the CLI: a program keeps a token instead of a path.

    folio_bookmarks.py MOUNTPOINT bookmark RELATIVE-PATH   -> prints a token
    folio_bookmarks.py MOUNTPOINT resolve TOKEN             -> prints the document's path now (and "stale TOKEN")

The socket of a mount is printed by `folio status --json MOUNTPOINT` as "controlSocket". Each request is one
JSON object on one line; the answer is one JSON line with "ok" and, on failure, "error"."""
import json
import socket
import subprocess
import sys


def control_socket(mountpoint):
    status = json.loads(subprocess.run(
        ["folio", "status", "--json", mountpoint], check=True, capture_output=True, text=True).stdout)
    return status["controlSocket"]


def ask(path, request):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(path)
        connection.sendall((json.dumps(request) + "\n").encode())
        answer = connection.makefile().readline()
    reply = json.loads(answer)
    if not reply["ok"]:
        sys.exit("folio: " + reply["error"])
    return reply


def main():
    mountpoint, command, argument = sys.argv[1:4]
    path = control_socket(mountpoint)
    if command == "bookmark":
        print(ask(path, {"command": "bookmark", "path": argument})["message"])
    else:
        resolved = ask(path, {"command": "resolve-bookmark", "target": argument})["bookmark"]
        print(resolved["path"])
        if resolved["stale"]:
            print("stale " + resolved["bookmark"])


if __name__ == "__main__":
    main()

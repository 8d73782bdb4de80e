"""A real SMTP server for the email tests (aiosmtpd, installed by .ci/run).

Usage: server.py PORT DIR [REFUSE]

Listens on 127.0.0.1:PORT and writes every message it accepts to DIR as
N.eml (the data as received) with N.rcpt (the envelope recipients, one per
line), N counting from 1. The first REFUSE messages are refused with a
temporary 451, as a busy server does. Prints "ready" once it listens.
"""

import asyncio
import os
import sys

from aiosmtpd.controller import Controller


class Store:
    def __init__(self, directory, refuse):
        self.directory = directory
        self.refuse = refuse
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        if self.refuse > 0:
            self.refuse -= 1
            return "451 4.3.0 Busy, try again later"
        self.count += 1
        base = os.path.join(self.directory, str(self.count))
        with open(base + ".rcpt.tmp", "w", encoding="utf-8") as rcpt:
            rcpt.write("\n".join(envelope.rcpt_tos))
        with open(base + ".eml.tmp", "wb") as data:
            data.write(envelope.original_content or envelope.content)
        os.rename(base + ".rcpt.tmp", base + ".rcpt")
        os.rename(base + ".eml.tmp", base + ".eml")
        return "250 OK"


def main():
    port, directory = int(sys.argv[1]), sys.argv[2]
    refuse = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    controller = Controller(Store(directory, refuse), hostname="127.0.0.1", port=port)
    controller.start()
    print("ready", flush=True)
    try:
        asyncio.get_event_loop().run_forever()
    finally:
        controller.stop()


if __name__ == "__main__":
    main()

"""The batch benchmarks' stand-in for a remote provider: the project's fake OpenAI-compatible
server's replies (`proactive_tui.testing.fake_openai`: the same completion body, usage and
responder), served by one asyncio loop instead of a thread per connection.

Why a second server: a benchmark runs the provider on the machine it measures, where a real one
would be elsewhere, so the provider's CPU is taken from the batch's cores. The threaded fake spends
about 0.45 ms of CPU a call (its HTTP parsing and a thread woken per request), 7-14% of a core in
a batch at 300 calls a second; this one a fraction of that, so the figures say more about the
batch and less about its stand-in. It answers non-streamed `POST .../chat/completions` only (what
a headless batch sends: `Gateway(stream_replies=False)`), after `latency` seconds, with HTTP/1.1
keep-alive; anything else gets a 404 and the connection closes. The benchmarks print its CPU.

Run: python benchmarks/light_server.py LATENCY  (prints its base URL, serves until stdin closes)
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, Callable

from proactive_tui.testing.fake_openai import FakeOpenAIServer, proactiveeval_responder


class LightServer:
    def __init__(self, respond: Callable[[dict[str, Any]], str], latency: float) -> None:
        self.respond = respond
        self.latency = latency
        self.bodies = FakeOpenAIServer(responder=respond)  # never started: its completion body only

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path = lines[0].split(" ")[:2]
                length = 0
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                raw = await reader.readexactly(length) if length else b""
                if method != "POST" or not path.rstrip("/").endswith("/chat/completions"):
                    writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    await writer.drain()
                    return
                body = json.loads(raw or b"{}")
                await asyncio.sleep(self.latency)
                payload = json.dumps(self.bodies._completion(body, self.respond(body))).encode()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                             + str(len(payload)).encode() + b"\r\n\r\n" + payload)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


async def main(latency: float, text: str) -> None:
    server = LightServer(proactiveeval_responder(text), latency)
    listening = await asyncio.start_server(server.serve, "127.0.0.1", 0, backlog=512)
    port = listening.sockets[0].getsockname()[1]
    print(f"http://127.0.0.1:{port}/v1", flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # until the benchmark closes our stdin
    listening.close()


if __name__ == "__main__":
    asyncio.run(main(float(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "Shall we talk about it?"))

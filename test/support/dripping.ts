/** A reply from an upstream that drips: it starts, then sends a byte every 20 ms forever, never stalling and never ending. */
export function dripping(start: string, contentType = 'application/json'): Response {
  let timer: ReturnType<typeof setInterval> | undefined
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(start))
      timer = setInterval(() => controller.enqueue(new Uint8Array([0x20])), 20)
    },
    cancel: () => clearInterval(timer),
  })
  return new Response(body, { headers: { 'content-type': contentType } })
}

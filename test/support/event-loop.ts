/** Whether long work lets waiting work in: the turns of the event loop a ticker got while it ran. */
export async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
  let turns = 0
  let running = true
  const ticker = (async () => {
    while (running) {
      await new Promise((resolve) => setTimeout(resolve, 0))
      turns++
    }
  })()
  await work()
  running = false
  await ticker
  return turns
}

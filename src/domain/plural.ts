/** Counts as people read them, on the pages and in command output: "1,204 nodes", "1 archive". */
const NUMBER = new Intl.NumberFormat('en')

export const count = (n: number) => NUMBER.format(n)

export const plural = (n: number, one: string, many = `${one}s`) => `${count(n)} ${n === 1 ? one : many}`

/** Text files embedded into the binary with `import x from './file.sql' with { type: 'text' }`. */
declare module '*.sql' {
  const text: string
  export default text
}
declare module '*.css' {
  const text: string
  export default text
}
declare module '*.svg' {
  const text: string
  export default text
}

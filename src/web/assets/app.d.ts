/** app.js is browser code, embedded as text (`with { type: 'text' }`); this gives that import its type. */
declare const text: string
export default text

// Stand-in for experimental-a2's errors.ts, which seed 003 does not show: the choice
// real/a2/store.h documents (A2Error with a code; the third argument carries the cause).
export class A2Error extends Error {
  code: string
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'A2Error'
    this.code = code
  }
}

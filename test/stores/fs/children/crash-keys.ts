/** The keys the crash test's writer works on, shared by the writer and the test. */
export const crashKeys = ['crash/a', 'crash/b', 'crash/c', 'crash/dir/d', 'crash/dir/e', 'crash/mp/f', 'crash/mp/g']

/**
 * How a command run in process ends early: where its script would call `process.exit(code)`, its
 * code throws a CommandExit (its message already written), and `exitStatus` turns that back into
 * the status the command resolves with. Shared by the gate, the release and the conformance check
 * (the *Command.ts modules under scripts/lib/), which the tests call in their own process.
 */
export class CommandExit {
  constructor(readonly code: number) {}
}

/** The command's exit status: what it returned (0 when nothing), or the code it exited early with. */
export async function exitStatus(run: () => Promise<number | void>): Promise<number> {
  try {
    return (await run()) ?? 0;
  } catch (error) {
    if (error instanceof CommandExit) return error.code;
    throw error;
  }
}

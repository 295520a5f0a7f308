/**
 * A waiter's alarm clock: `wait(ms)` resolves true as soon as `ring()` is called (or was called
 * since the last wait), false after `ms` without a ring. One waiter at a time.
 */
export class Wakeup {
  private rung = false;
  private resolve: ((rung: boolean) => void) | undefined;

  ring(): void {
    const resolve = this.resolve;
    if (resolve) {
      this.resolve = undefined;
      resolve(true);
    } else {
      this.rung = true;
    }
  }

  wait(ms: number): Promise<boolean> {
    if (this.rung) {
      this.rung = false;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(
        () => {
          this.resolve = undefined;
          resolve(false);
        },
        Math.max(0, ms),
      );
      this.resolve = (rung) => {
        clearTimeout(timer);
        resolve(rung);
      };
    });
  }
}

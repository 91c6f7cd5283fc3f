/**
 * Whether the chat's transcript follows its end. The webview records it on every scroll (and
 * after each render); when the transcript's box changes size (the view gets shorter because the
 * Memory view opened, the prompt grew, the panel was resized), a transcript that was at its end is
 * put back there. Pure: the webview passes the element's metrics.
 */

export interface ScrollMetrics {
  scrollTop: number;
  scrollHeight: number;
  clientHeight: number;
}

/** How close to the end (px) still counts as at the end. */
export const END_SLACK = 48;

export function atEnd(m: ScrollMetrics, slack = END_SLACK): boolean {
  return m.scrollHeight - m.scrollTop - m.clientHeight < slack;
}

export class EndPin {
  /** At the end when last seen (a new transcript starts there). */
  pinned = true;
  /** The box height the state was recorded at (-1: not yet). */
  private height = -1;

  /**
   * A scroll, or the end of a render: record whether the transcript is at its end. A scroll that
   * comes with a new box height is the resize's doing (the browser clamping `scrollTop`): it
   * leaves the state to `resized`. A hidden view (height 0) records nothing.
   */
  seen(m: ScrollMetrics): void {
    if (m.clientHeight <= 0) {
      return;
    }
    if (this.height >= 0 && m.clientHeight !== this.height) {
      return;
    }
    this.height = m.clientHeight;
    this.pinned = atEnd(m);
  }

  /** The box changed size: whether to scroll to the end (it was there before). */
  resized(m: ScrollMetrics): boolean {
    if (m.clientHeight <= 0) {
      return false;
    }
    this.height = m.clientHeight;
    return this.pinned && !atEnd(m, 1);
  }
}

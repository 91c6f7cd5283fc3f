/** The chat transcript kept at its end when the view changes size (`src/chat/scroll.ts`). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { END_SLACK, EndPin, atEnd, type ScrollMetrics } from '../src/chat/scroll';

/** A transcript of `content` px in a box of `box` px, scrolled to `top`. */
const m = (content: number, box: number, top: number): ScrollMetrics => ({
  scrollHeight: content,
  clientHeight: box,
  scrollTop: top,
});

describe('chat scroll', () => {
  it('counts the last few pixels as the end', () => {
    assert.equal(atEnd(m(1000, 400, 600)), true);
    assert.equal(atEnd(m(1000, 400, 600 - END_SLACK + 1)), true);
    assert.equal(atEnd(m(1000, 400, 600 - END_SLACK)), false);
    assert.equal(atEnd(m(300, 400, 0)), true, 'shorter than its box');
  });

  it('a transcript at its end stays there when the view gets shorter', () => {
    const pin = new EndPin();
    pin.seen(m(1000, 400, 600));
    // The Memory view opened below the chat: the box is 250 px now, scrollTop unchanged.
    assert.equal(pin.resized(m(1000, 250, 600)), true);
    // The adapter scrolled to the end; its scroll event keeps it pinned.
    pin.seen(m(1000, 250, 750));
    assert.equal(pin.pinned, true);
    assert.equal(pin.resized(m(1000, 400, 600)), false, 'taller: the browser keeps the end by itself');
  });

  it('a transcript the user scrolled up in stays where it is', () => {
    const pin = new EndPin();
    pin.seen(m(1000, 400, 600));
    pin.seen(m(1000, 400, 200));
    assert.equal(pin.pinned, false);
    assert.equal(pin.resized(m(1000, 250, 200)), false);
  });

  it('ignores the scroll the resize itself causes, and a hidden view', () => {
    const pin = new EndPin();
    pin.seen(m(1000, 400, 600));
    // The box shrank; a scroll event arrives before the resize observer: not the user's.
    pin.seen(m(1000, 250, 600));
    assert.equal(pin.pinned, true);
    assert.equal(pin.resized(m(1000, 250, 600)), true);
    // Collapsed (0 px), then shown again.
    pin.seen(m(1000, 0, 0));
    assert.equal(pin.resized(m(1000, 0, 0)), false);
    assert.equal(pin.pinned, true);
    assert.equal(pin.resized(m(1000, 250, 0)), true);
  });
});

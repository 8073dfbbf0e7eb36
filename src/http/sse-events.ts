/** Cuts server-sent event text into whole events as it arrives, each as its raw text. */
export interface EventSplitter {
  /** Adds text; returns every event it completes, each with its terminating blank line, unchanged. */
  push(text: string): string[];
  /** The text of an event that has not been completed yet, taken out of the splitter. */
  rest(): string;
}

/**
 * An event splitter. An event ends at an empty line; lines end in CRLF, LF or CR (the SSE
 * grammar), and a CR at the end of the text waits for the next text, which may start with its LF.
 */
export function eventSplitter(): EventSplitter {
  let buffer = "";
  let position = 0;
  let lineStart = 0;
  return {
    push(text) {
      buffer += text;
      const events: string[] = [];
      let eventStart = 0;
      while (position < buffer.length) {
        const character = buffer[position];
        if (character !== "\n" && character !== "\r") {
          position++;
          continue;
        }
        let end = position + 1;
        if (character === "\r") {
          if (end === buffer.length) break;
          if (buffer[end] === "\n") end++;
        }
        const emptyLine = position === lineStart;
        position = end;
        lineStart = end;
        if (emptyLine) {
          events.push(buffer.slice(eventStart, end));
          eventStart = end;
        }
      }
      buffer = buffer.slice(eventStart);
      position -= eventStart;
      lineStart -= eventStart;
      return events;
    },
    rest() {
      const text = buffer;
      buffer = "";
      position = 0;
      lineStart = 0;
      return text;
    },
  };
}

/* Postlane tracking script: sends workspace (w:) and custom (c:) events from a site.
   Usage: <script async src="…/js/track/pk_….js"></script>
          <script>window.postlane=window.postlane||function(){(postlane.q=postlane.q||[]).push(arguments)};
                  postlane('identify','jane@example.com'); postlane('track','c:product.viewed',{sku:'A1'});</script>
   No cookies: the visitor's id and identified address live in this site's own localStorage.
   Never blocks the page: loaded async, every call queued and sent in the background, every
   failure swallowed. */
(function (w) {
  // Where the script came from is where its events go (the key is in both paths).
  var current = w.document && w.document.currentScript;
  var ENDPOINT =
    current && /\/js\/track\/pk_\w+\.js/.test(current.src)
      ? current.src.replace(/\/js\/track\/(pk_\w+)\.js.*$/, '/v2/track/$1')
      : '__ENDPOINT__';
  var PREFIX = 'postlane:';
  function store(name, value) {
    try {
      if (value === undefined) return w.localStorage.getItem(PREFIX + name);
      w.localStorage.setItem(PREFIX + name, value);
    } catch (e) {}
    return value;
  }
  var memory = {};
  function get(name) {
    return store(name) || memory[name] || null;
  }
  function set(name, value) {
    memory[name] = value;
    store(name, value);
  }
  function visitor() {
    var id = get('id');
    if (!id) {
      var bytes = new Uint8Array(16);
      (w.crypto || {}).getRandomValues
        ? w.crypto.getRandomValues(bytes)
        : bytes.forEach(function (_, i) {
            bytes[i] = Math.random() * 256;
          });
      id = Array.prototype.map
        .call(bytes, function (b) {
          return ('0' + b.toString(16)).slice(-2);
        })
        .join('');
      set('id', id);
    }
    return id;
  }
  function send(body) {
    body.anonymous_id = visitor();
    body.url = String(w.location.href).slice(0, 2048);
    try {
      return w
        .fetch(ENDPOINT, {
          method: 'POST',
          mode: 'cors',
          credentials: 'omit',
          keepalive: true,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
        .then(
          function (r) {
            return r.ok;
          },
          function () {
            return false;
          },
        );
    } catch (e) {
      return Promise.resolve(false);
    }
  }
  var api = {
    track: function (type, properties) {
      var body = { kind: 'track', type: String(type), properties: properties || {} };
      var email = get('email');
      if (email) body.email = email;
      return send(body);
    },
    identify: function (email) {
      set('email', String(email));
      return send({ kind: 'identify', email: String(email) });
    },
    reset: function () {
      set('email', '');
      set('id', '');
      return Promise.resolve(true);
    },
  };
  function call(args) {
    var fn = api[args[0]];
    return fn ? fn.apply(null, Array.prototype.slice.call(args, 1)) : Promise.resolve(false);
  }
  var queued = (w.postlane && w.postlane.q) || [];
  // Calls run in their order: an identify queued before a track ties that track too.
  var chain = Promise.resolve();
  function postlane() {
    var args = arguments;
    return (chain = chain.then(function () {
      return call(args);
    }));
  }
  w.postlane = postlane;
  for (var i = 0; i < queued.length; i++) postlane.apply(null, queued[i]);
})(window);

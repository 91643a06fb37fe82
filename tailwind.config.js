/** Tailwind v3: scans the templ components (and the Go that builds class names). */
module.exports = {
  content: ["./views/**/*.templ", "./views/**/*.go", "./handlers/**/*.go", "./static/app.js"],
  theme: { extend: {} },
  plugins: [],
};
